/**
 * Strict UTF-8 decoding for CSV, XML and JSON. A replacement character silently written into an
 * address is worse than a refused file, so invalid bytes are an error that names the line.
 */
import { type InputRejection, quoteName, reject } from './codes.js';

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

/** Decodes UTF-8 with a fatal decoder; a UTF-8 BOM is dropped, UTF-16 is refused in words. */
export function decodeUtf8(bytes: Buffer, fileName: string): Decoded {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return reject(
      'DOCEX_INPUT_ENCODING',
      `${quoteName(fileName)} is UTF-16 encoded; export it as UTF-8 (in Excel: "CSV UTF-8").`,
      { encoding: 'UTF-16' },
    );
  }
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
