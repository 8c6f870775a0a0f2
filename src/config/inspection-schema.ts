/**
 * The isolated inspection of dropped files: how many worker threads parse them, and the memory
 * and time one file may cost before it is refused (DOCEX_INPUT_TOO_COMPLEX) and the agent
 * carries on with the next.
 */
import { z } from 'zod';
import { byteSize, count, durationMs } from './schema-types.js';

export const inspectionSchema = z
  .strictObject({
    workers: count(1, 16, 2).describe(
      'Worker threads that parse dropped files (PDF, ZIP, XML, CSV, JSON) away from the agent; each parses one file at a time.',
    ),
    memory: byteSize(256 * 1024 ** 2).describe(
      'Heap each worker may use; a file whose check needs more is refused (DOCEX_INPUT_TOO_COMPLEX).',
    ),
    timeLimit: durationMs(30_000).describe(
      'How long the check of one file may take; a file taking longer is refused (DOCEX_INPUT_TOO_COMPLEX).',
    ),
  })
  .prefault({})
  .describe('Isolated inspection of dropped files: every parse runs in a worker thread under these limits.');

export type InspectionConfig = z.output<typeof inspectionSchema>;
