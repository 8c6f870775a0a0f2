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
    limits: z
      .strictObject({
        pdfInflate: byteSize(64 * 1024 ** 2).describe(
          'Bytes the streams a PDF parser must decode (object and cross-reference streams) may inflate to, per PDF.',
        ),
        csvColumns: count(1, 1_000_000, 2_000).describe('Columns a CSV header may have.'),
        csvLineBytes: byteSize(1024 ** 2).describe('Length of one CSV line.'),
        xmlElements: count(1, 100_000_000, 1_000_000).describe('Elements an XML file may hold.'),
        xmlAttributes: count(1, 100_000_000, 1_000_000).describe(
          'Attributes an XML file may hold, all elements together.',
        ),
        sidecarBytes: byteSize(1024 ** 2).describe("Size of a payload-pdf PDF's JSON sidecar."),
      })
      .prefault({})
      .describe(
        'What one dropped file may expand to while it is checked; over a limit it is refused (DOCEX_INPUT_TOO_COMPLEX) with the limit named.',
      ),
  })
  .prefault({})
  .describe('Isolated inspection of dropped files: every parse runs in a worker thread under these limits.');

export type InspectionConfig = z.output<typeof inspectionSchema>;
