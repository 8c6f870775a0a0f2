import path from 'node:path';
import { csvItems } from './csv.js';
import { pdfEntryItem, pdfFileItems } from './pdf.js';
import type { PdfReading } from './pdf-identifiers.js';
import {
  type ContentItem,
  type ContentResult,
  collect,
  fail,
  type ItemSink,
  type ReadResult,
  readBounded,
} from './types.js';
import { ublItem } from './ubl.js';
import { xmlDataItems } from './xml-data.js';
import { zipItems } from './zip.js';

export { payloadItem } from './payload.js';
export { type PdfReading, pdfIdentifierRules } from './pdf-identifiers.js';
export type { ContentItem, ContentResult } from './types.js';

export interface UploadInput {
  filePath: string;
  filename: string;
  inputSourceType: string;
  /** How a PDF input source finds its identifiers; without, PDFs are read for their metadata only. */
  pdf?: PdfReading;
}

/**
 * Reads an uploaded file the way its workflow's input source says (decisions.md, Workflows),
 * handing its items to `sink` in order. A data file is streamed row by row; the other kinds are
 * read whole (within MAX_PARSE_BYTES) and their items handed over once all could be read.
 */
export async function readUpload(input: UploadInput, sink: ItemSink): Promise<ReadResult> {
  if (input.inputSourceType === 'DATA_FILE' && path.extname(input.filename).toLowerCase() === '.csv') {
    return csvItems(input.filePath, input.filename, sink);
  }
  const result = await analyseWhole(input);
  if (!result.ok) return result;
  for (const item of result.items) await sink(item);
  return { ok: true, count: result.items.length };
}

/** Every item of an uploaded file at once (a test, a small file). */
export async function analyseUpload(input: UploadInput): Promise<ContentResult> {
  const items: ContentItem[] = [];
  const result = await readUpload(input, (item) => {
    items.push(item);
  });
  return result.ok ? { ok: true, items } : result;
}

async function analyseWhole(input: UploadInput): Promise<ContentResult> {
  const ext = path.extname(input.filename).toLowerCase();
  try {
    switch (input.inputSourceType) {
      case 'PDF':
      case 'PAYLOAD_PDF':
        if (ext === '.zip' && input.inputSourceType === 'PDF')
          return await zipItems(input.filePath, '.pdf', (data, entry) =>
            pdfEntryItem(data, entry, input.pdf),
          );
        return await pdfFileItems(input.filePath, input.filename, input.pdf);
      case 'DATA_FILE':
        return xmlDataItems(await readBounded(input.filePath), input.filename);
      case 'UBL':
        if (ext === '.zip') return await zipItems(input.filePath, '.xml', ublItem);
        return collect([ublItem(await readBounded(input.filePath), input.filename)]);
      default:
        return fail(
          'UNSUPPORTED_INPUT_SOURCE',
          `input source ${input.inputSourceType} takes no uploaded file`,
        );
    }
  } catch (err) {
    return fail('UNREADABLE_FILE', `the file could not be read: ${(err as Error).message}`);
  }
}
