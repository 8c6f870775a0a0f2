/**
 * What a ZIP may hold per input source, and how each entry is checked once read: a PDF workflow
 * takes PDFs, a UBL workflow UBL documents, a payload-pdf batch PDFs plus its index.csv.
 */
import path from 'node:path';
import { quoteName, reject } from './codes.js';
import { inspectCsvBytes } from './csv.js';
import { detectType } from './detect-type.js';
import { checkPdfBytes } from './pdf.js';
import { rejectWideText } from './text.js';
import { inspectXmlBytes } from './xml.js';
import type { ZipEntryPolicy } from './zip.js';

export function zipPolicy(source: string): ZipEntryPolicy {
  const ext = (name: string) => path.extname(name).toLowerCase();
  const pdfCheck = async (bytes: Buffer, name: string, complete: boolean) => {
    if (!complete) {
      return detectType(bytes) === 'pdf'
        ? undefined
        : reject('DOCEX_INPUT_ZIP_ENTRY_TYPE', `${quoteName(name)} is not a PDF.`);
    }
    const checked = await checkPdfBytes(bytes, name);
    return checked.ok ? undefined : checked;
  };
  if (source === 'UBL') {
    return {
      label: 'XML files',
      accepts: (name) => ext(name) === '.xml',
      check: async (bytes, name, complete) => {
        if (!complete) {
          const wide = rejectWideText(bytes, name);
          if (wide) return wide;
          return detectType(bytes) === 'xml'
            ? undefined
            : reject('DOCEX_INPUT_ZIP_ENTRY_TYPE', `${quoteName(name)} is not XML.`);
        }
        const checked = inspectXmlBytes(bytes, name, 'ubl');
        return checked.ok ? undefined : checked;
      },
    };
  }
  if (source === 'PAYLOAD_PDF') {
    return {
      label: 'PDF files or index.csv',
      accepts: (name) => ext(name) === '.pdf' || name === 'index.csv',
      check: async (bytes, name, complete) => {
        if (name !== 'index.csv') return pdfCheck(bytes, name, complete);
        const checked = inspectCsvBytes(bytes, name);
        return checked.ok ? undefined : checked;
      },
    };
  }
  return { label: 'PDF files', accepts: (name) => ext(name) === '.pdf', check: pdfCheck };
}
