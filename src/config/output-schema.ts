/**
 * Output folders the ERP reads (proofs, statuses, incoming Peppol documents, error reports): on
 * this machine, or on an SFTP server.
 */
import { z } from 'zod';
import { pathText } from './schema-types.js';

const localTargetSchema = z
  .strictObject({
    type: z.literal('local'),
    path: pathText()
      .describe('The folder; relative to this file.')
      .meta({ examples: ['./out/proofs'] }),
  })
  .describe('A folder on this machine or on a mounted share.');

export const outputTargetSchema = z
  .discriminatedUnion('type', [localTargetSchema])
  .describe('Where files for the ERP are written: every file under a temporary name, then renamed.');

export type OutputTargetConfig = z.output<typeof outputTargetSchema>;
