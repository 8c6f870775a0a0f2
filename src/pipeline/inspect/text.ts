/**
 * Strict UTF-8 decoding for CSV, XML and JSON. A replacement character silently written into an
 * address is worse than a rejected file, so invalid bytes are an error that names the line.
 */
import path from 'node:path';
import { type InputRejection, quoteName, reject } from './codes.js';
import { detectWideText, type WideText } from './detect-type.js';

export type Decoded = { ok: true; text: string } | InputRejection;

function firstBadLine(bytes: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      return line;
    }
    line += 1;
    start = end + 1;
  }
  return line;
}

const ORDER: Record<WideText['encoding'], string> = {
  'UTF-16LE': 'UTF-16 (little-endian',
  'UTF-16BE': 'UTF-16 (big-endian',
  'UTF-32LE': 'UTF-32 (little-endian',
  'UTF-32BE': 'UTF-32 (big-endian',
};

/**
 * The rejection of UTF-16 or UTF-32 text (see detectWideText), the same in every format: a CSV, an
 * XML or UBL document, a JSON request, a sidecar, an index file. `head` may be the first bytes only.
 */
export function rejectWideText(head: Buffer, fileName: string): InputRejection | undefined {
  const wide = detectWideText(head);
  if (!wide) return undefined;
  const how = `${ORDER[wide.encoding]}, ${wide.bom ? 'with' : 'without'} a byte order mark)`;
  const hint = path.extname(fileName).toLowerCase() === '.csv' ? ' (in Excel: "CSV UTF-8")' : '';
  return reject(
    'DOCEX_INPUT_ENCODING',
    `${quoteName(fileName)} is ${how}, not UTF-8; export it as UTF-8${hint}.`,
    { encoding: wide.encoding, bom: wide.bom },
  );
}

/** Decodes UTF-8 with a fatal decoder; a UTF-8 BOM is dropped, UTF-16 and UTF-32 are rejected in words. */
export function decodeUtf8(bytes: Buffer, fileName: string): Decoded {
  const wide = rejectWideText(bytes, fileName);
  if (wide) return wide;
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    return { ok: true, text };
  } catch {
    const line = firstBadLine(bytes);
    return reject(
      'DOCEX_INPUT_ENCODING',
      `${quoteName(fileName)} is not valid UTF-8 (first bad byte on line ${line}); export it as UTF-8.`,
      { line },
    );
  }
}
