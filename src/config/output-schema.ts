/**
 * Output folders the ERP reads (proofs, statuses, incoming Peppol documents, error reports): on
 * this machine, or on an SFTP server.
 */
import { z } from 'zod';
import { pathText } from './schema-types.js';
import { refineSftpConnection, sftpConnectionShape } from './sftp-schema.js';

const localTargetSchema = z
  .strictObject({
    type: z.literal('local'),
    path: pathText()
      .describe('The folder; relative to this file.')
      .meta({ examples: ['./out/proofs'] }),
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
  })
  .superRefine(refineSftpConnection)
  .describe('A folder on an SFTP server: each file is written under a temporary name, then renamed.');

export const outputTargetSchema = z
  .discriminatedUnion('type', [localTargetSchema, sftpTargetSchema])
  .describe('Where files for the ERP are written: every file under a temporary name, then renamed.');

export type OutputTargetConfig = z.output<typeof outputTargetSchema>;
