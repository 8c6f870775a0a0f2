/**
 * A drop folder on an SFTP server: the connection (sftp-schema.ts), the remote folder and what
 * happens to remote files. Defaults that depend on the folder's remote path are filled by the
 * folder schema; those under the state folder (the local spool, the local archive and error copies)
 * by `withSftpFolderDefaults` once the state folder is known.
 */
import path from 'node:path';
import { z } from 'zod';
import { durationMs, pathText } from './schema-types.js';
import { refineSftpConnection, sftpConnectionShape } from './sftp-schema.js';

const remoteDir = () =>
  z
    .string()
    .min(1, 'must not be empty')
    .refine((v) => !v.includes('\\'), 'remote paths use / (POSIX), not \\');

export const sftpSourceSchema = z
  .strictObject({
    type: z.literal('sftp'),
    ...sftpConnectionShape,
    path: remoteDir()
      .describe(
        'The remote folder the ERP drops files into (absolute, or relative to the login folder). The agent keeps claimed files in its .processing sub-folder.',
      )
      .meta({ examples: ['/outbox/invoices'] }),
    pollIntervalMs: durationMs(10_000).describe(
      'Time between two listings of the remote folder (one listing per poll, whatever the number of files).',
    ),
    claim: z
      .enum(['rename', 'journal'])
      .default('rename')
      .describe(
        'rename: a complete file is renamed into <path>/.processing before it is downloaded. journal: for servers that refuse rename, the file stays in place and the journal alone remembers it was taken; once final it is removed (copies stay in the local archive and error folders). A server that refuses rename switches to journal by itself (logged once).',
      ),
    afterSuccess: z
      .enum(['archive', 'delete'])
      .default('archive')
      .describe('After a file was submitted: move it to remoteArchiveDir/YYYY-MM-DD, or delete it.'),
    remoteArchiveDir: remoteDir()
      .optional()
      .describe('Remote folder for submitted files (afterSuccess: archive). Default: <path>/.archive.')
      .meta({ examples: ['/outbox/invoices/.archive'] }),
    remoteErrorDir: remoteDir()
      .optional()
      .describe(
        'Remote folder for refused files, each with <name>.error.txt and .error.json beside it. Default: <path>/.error.',
      )
      .meta({ examples: ['/outbox/invoices/.error'] }),
    spoolDir: pathText()
      .optional()
      .describe(
        'Local folder the files are downloaded into before they are checked and sent. Default: <stateDir>/sftp/<folder name>/spool.',
      ),
  })
  .superRefine(refineSftpConnection)
  .describe(
    'A folder on an SFTP server: files are taken once complete, downloaded, then sent like local files; the remote file is archived, deleted or moved to an error folder afterwards.',
  );

/** The folder schema's defaults for an SFTP source; `''` stands for "under the state folder". */
export function sftpSourceDefaults(source: z.output<typeof sftpSourceSchema>) {
  return {
    ...source,
    remoteArchiveDir: source.remoteArchiveDir ?? path.posix.join(source.path, '.archive'),
    remoteErrorDir: source.remoteErrorDir ?? path.posix.join(source.path, '.error'),
    spoolDir: source.spoolDir ?? '',
  };
}

/** An SFTP folder source after defaults (spoolDir absolute once the config is loaded). */
export type SftpSourceConfig = ReturnType<typeof sftpSourceDefaults>;

interface FolderWithDirs {
  name: string;
  source: { type: string; spoolDir?: string };
  archiveDir: string;
  errorDir: string;
}

/**
 * Fills the state-folder defaults of SFTP folders: the spool and the local archive and error
 * folders (which keep a copy of each remote file) live in `<stateDir>/sftp/<folder>/`.
 */
export function withSftpFolderDefaults<C extends { stateDir: string; folders: FolderWithDirs[] }>(
  config: C,
): C {
  return {
    ...config,
    folders: config.folders.map((folder) => {
      if (folder.source.type !== 'sftp') return folder;
      const base = path.join(config.stateDir, 'sftp', folder.name);
      return {
        ...folder,
        source: { ...folder.source, spoolDir: folder.source.spoolDir || path.join(base, 'spool') },
        archiveDir: folder.archiveDir || path.join(base, 'archive'),
        errorDir: folder.errorDir || path.join(base, 'error'),
      };
    }),
  };
}

/**
 * The folder's identity as a URL without secrets: `sftp://erp@host:22/outbox/invoices`. The journal
 * records each remote file under `<this>/<name>`; two folders on one URL would take the same files.
 */
export function sftpFolderUrl(source: {
  username: string;
  host: string;
  port: number;
  path: string;
}): string {
  const remote = source.path.startsWith('/') ? source.path : `/${source.path}`;
  return `sftp://${source.username}@${source.host}:${source.port}${remote.replace(/\/+$/, '')}`;
}
