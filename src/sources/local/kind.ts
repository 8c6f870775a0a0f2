/**
 * A local drop folder as the configuration declares it: a folder on this machine or on a mounted
 * share. Its claimed files stay in its own `.processing/`, which every agent that mounts it reaches.
 */
import path from 'node:path';
import { z } from 'zod';
import { durationMs, flag, pathText } from '../../config/schema-types.js';
import { relativeBelow } from '../../domain/relative-path.js';
import { defineSourceKind } from '../kind.js';

/** The drop folder's sub-folder a claimed file is renamed into (`claim.ts`). */
export const PROCESSING_DIR = '.processing';

const localSourceSchema = z
  .strictObject({
    type: z.literal('local'),
    path: pathText()
      .describe('The folder the ERP drops files into; relative to this file.')
      .meta({ examples: ['./in/invoices'] }),
    usePolling: flag(false).describe(
      'Poll the folder instead of relying on file-system events. Needed on network mounts (NFS, SMB), where events are not delivered.',
    ),
    pollIntervalMs: durationMs(2000).describe('Time between two polls when usePolling is true.'),
  })
  .describe('A folder on this machine or on a mounted network share.');

/** A local folder source after defaults. */
export type LocalSourceConfig = z.output<typeof localSourceSchema>;

export const localKind = defineSourceKind({
  type: 'local',
  label: 'a folder here',
  schema: localSourceSchema,
  defaults: (source): LocalSourceConfig => source,
  // Same disk as the drop folder: a submitted or refused file is moved by a rename.
  defaultDir: (source, which) => path.join(source.path, which === 'archive' ? '.archive' : '.error'),
  withStateDefaults: (folder) => folder,
  folderIssues: () => [],
  resolvePaths: (source, base) => ({ ...source, path: path.resolve(base, source.path) }),
  identity: (source) => source.path,
  intake: (source) => ({
    dir: source.path,
    originalPath: (relative) => path.join(source.path, ...relative.split('/')),
    relativePath: (originalPath) => relativeBelow(source.path, originalPath, path.sep),
  }),
  localDropFolder: (source) => source.path,
  // Made once the drop folder is there (a missing drop folder is the operator's to make).
  ownDirs: (source) => [path.join(source.path, PROCESSING_DIR)],
  remote: false,
  sharedFolder: true,
});
