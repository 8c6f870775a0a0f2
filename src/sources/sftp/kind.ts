/**
 * A drop folder on an SFTP server as the configuration declares it: the connection
 * (config/sftp-schema.ts), the remote folder and what happens to remote files. Defaults that depend
 * on the folder's remote path are filled with the folder; those under the state folder (the local
 * spool, the local archive and error copies) once the state folder is known. Its files are
 * downloaded into this agent's spool: the claimed copy is the agent's own.
 */
import path from 'node:path';
import { z } from 'zod';
import { durationMs, pathText } from '../../config/schema-types.js';
import {
  refineSftpConnection,
  resolveSftpConnectionPaths,
  sftpConnectionShape,
} from '../../config/sftp-schema.js';
import { relativeBelow } from '../../domain/relative-path.js';
import { defineSourceKind } from '../kind.js';

const remoteDir = () =>
  z
    .string()
    .min(1, 'must not be empty')
    .refine((v) => !v.includes('\\'), 'remote paths use / (POSIX), not \\');

const sftpSourceSchema = z
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
function sftpSourceDefaults(source: z.output<typeof sftpSourceSchema>) {
  return {
    ...source,
    remoteArchiveDir: source.remoteArchiveDir ?? path.posix.join(source.path, '.archive'),
    remoteErrorDir: source.remoteErrorDir ?? path.posix.join(source.path, '.error'),
    spoolDir: source.spoolDir ?? '',
  };
}

/** An SFTP folder source after defaults (spoolDir absolute once the config is loaded). */
export type SftpSourceConfig = ReturnType<typeof sftpSourceDefaults>;

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

export const sftpKind = defineSourceKind<'sftp', typeof sftpSourceSchema, SftpSourceConfig>({
  type: 'sftp',
  label: 'a folder on an SFTP server',
  schema: sftpSourceSchema,
  defaults: sftpSourceDefaults,
  defaultDir: () => '',
  // The spool and the local archive and error folders (a copy of each remote file) live in
  // <stateDir>/sftp/<folder>/.
  withStateDefaults: (folder, stateDir) => {
    const base = path.join(stateDir, 'sftp', folder.name);
    return {
      ...folder,
      source: { ...folder.source, spoolDir: folder.source.spoolDir || path.join(base, 'spool') },
      archiveDir: folder.archiveDir || path.join(base, 'archive'),
      errorDir: folder.errorDir || path.join(base, 'error'),
    };
  },
  // PDFs waiting in .processing for an index that names them are not tracked on a remote server.
  folderIssues: (folder) =>
    folder.payloadPdf.pairing === 'index-csv'
      ? [
          {
            path: ['payloadPdf', 'pairing'],
            message:
              'index-csv is not supported for SFTP folders: drop a ZIP batch (PDFs + index.csv) instead',
          },
        ]
      : [],
  // A remote folder's path is the server's; only its local files (key, known_hosts, spool) resolve here.
  resolvePaths: (source, base) => ({
    ...resolveSftpConnectionPaths(source, base),
    spoolDir: path.resolve(base, source.spoolDir),
  }),
  identity: sftpFolderUrl,
  // The spool holds the downloaded copies, recorded under the remote URL where they were dropped.
  intake: (source) => {
    const url = sftpFolderUrl(source);
    return {
      dir: source.spoolDir,
      originalPath: (relative) => `${url}/${relative}`,
      relativePath: (originalPath) => relativeBelow(url, originalPath, '/'),
    };
  },
  // The remote drop folder is checked by the source at each poll until it is there.
  localDropFolder: () => undefined,
  ownDirs: (source) => [source.spoolDir],
  remote: true,
  sharedFolder: false,
});
