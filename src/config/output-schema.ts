/**
 * Output folders the ERP reads (proofs, statuses, incoming Peppol documents, error reports): on
 * this machine, or on an SFTP server.
 */
import path from 'node:path';
import { z } from 'zod';
import { pathText, retention } from './schema-types.js';
import { refineSftpConnection, sftpConnectionShape } from './sftp-schema.js';

/**
 * A local output path starting with this token lies under the state folder. The defaults use it:
 * outputs never land beside the configuration file (often /etc, read-only to the service).
 */
export const STATE_DIR_TOKEN = '<stateDir>';

/** The default local target of one output: `<stateDir>/out/<name>`. */
export const stateOutputDefault = (name: string) =>
  ({ type: 'local', path: `${STATE_DIR_TOKEN}/out/${name}` }) as const;

/** A local target's path with a leading `<stateDir>` replaced by the state folder (as written). */
export function withStateDir<T extends { type: string; path: string }>(target: T, stateDir: string): T {
  if (target.type !== 'local') return target;
  const rest =
    target.path === STATE_DIR_TOKEN
      ? ''
      : target.path.startsWith(`${STATE_DIR_TOKEN}/`)
        ? target.path.slice(STATE_DIR_TOKEN.length + 1)
        : undefined;
  return rest === undefined ? target : { ...target, path: path.join(stateDir, rest) };
}

const retentionOfOutput = () =>
  retention().describe(
    'Files in this output older than this (by modification time) are removed: `90d`, `12h` or `off` (keep forever, the default). Checked a minute after start and every 6 hours; each removal is counted (docex_retention_removed_total) and logged. Emptied sub-folders are removed on a local folder, left on an SFTP server.',
  );

const localTargetSchema = z
  .strictObject({
    type: z.literal('local'),
    path: pathText()
      .describe(
        `The folder; relative to this file, or to the state folder when it starts with ${STATE_DIR_TOKEN}/.`,
      )
      .meta({ examples: ['/srv/docex/out/proofs'] }),
    retention: retentionOfOutput(),
  })
  .describe('A folder on this machine or on a mounted share.');

const sftpTargetSchema = z
  .strictObject({
    type: z.literal('sftp'),
    ...sftpConnectionShape,
    path: z
      .string()
      .min(1, 'must not be empty')
      .describe('The folder on the server (absolute, or relative to the login folder).')
      .meta({ examples: ['/out/proofs'] }),
    staging: z
      .string()
      .min(1, 'must not be empty')
      .optional()
      .describe(
        'A folder on the same server for files being written (temporary names), renamed into path when complete. On a server that refuses rename, files are written here under their final names instead.',
      ),
    retention: retentionOfOutput(),
  })
  .superRefine(refineSftpConnection)
  .describe('A folder on an SFTP server: each file is written under a temporary name, then renamed.');

export const outputTargetSchema = z
  .discriminatedUnion('type', [localTargetSchema, sftpTargetSchema])
  .describe('Where files for the ERP are written: every file under a temporary name, then renamed.');

export type OutputTargetConfig = z.output<typeof outputTargetSchema>;
