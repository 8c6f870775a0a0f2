import path from 'node:path';
import { csvItems } from './csv.js';
import { pdfEntryItem, pdfFileItems } from './pdf.js';
import type { PdfReading } from './pdf-identifiers.js';
import { type ContentResult, collect, fail, readBounded } from './types.js';
import { ublItem } from './ubl.js';
import { xmlDataItems } from './xml-data.js';
import { zipItems } from './zip.js';

export { payloadItem } from './payload.js';
export { type PdfReading, pdfIdentifierRules } from './pdf-identifiers.js';
export type { ContentItem, ContentResult } from './types.js';

/** Reads an uploaded file the way its workflow's input source says (decisions.md, Workflows). */
export async function analyseUpload(input: {
  filePath: string;
  filename: string;
  inputSourceType: string;
  /** How a PDF input source finds its identifiers; without, PDFs are read for their metadata only. */
  pdf?: PdfReading;
}): Promise<ContentResult> {
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
        if (ext === '.csv') return csvItems(await readBounded(input.filePath), input.filename);
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
