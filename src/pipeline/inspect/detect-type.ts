/**
 * Type by content, not by name: an ERP that writes a ZIP under `.pdf` or an HTML error page under
 * `.csv` is caught before it costs a job. Looks at the first bytes only (HEAD_BYTES is enough).
 */
export type DetectedType = 'pdf' | 'zip' | 'xml' | 'json' | 'text' | 'unknown';

/** How many leading bytes `detectType` needs; PDF readers accept `%PDF-` within the first KiB. */
export const HEAD_BYTES = 4096;

const PDF_MAGIC = Buffer.from('%PDF-');
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function startsWith(buf: Buffer, prefix: number[]): boolean {
  return prefix.every((b, i) => buf[i] === b);
}

/** True when the bytes look like text: no NUL and few other C0 controls. */
function looksLikeText(buf: Buffer): boolean {
  let controls = 0;
  for (const b of buf) {
    if (b === 0) return false;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) controls += 1;
  }
  return controls <= buf.length / 100;
}

export function detectType(head: Buffer): DetectedType {
  // Local file header, or the end-of-central-directory record of an empty archive. Checked
  // before PDF: a ZIP storing a PDF uncompressed holds `%PDF-` within its first KiB.
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04]) || startsWith(head, [0x50, 0x4b, 0x05, 0x06])) return 'zip';
  if (head.subarray(0, 1024).indexOf(PDF_MAGIC) !== -1) return 'pdf';
  // UTF-16 text is reported as text so the encoding check can say so in words.
  if (startsWith(head, [0xff, 0xfe]) || startsWith(head, [0xfe, 0xff])) return 'text';
  const body = startsWith(head, [...UTF8_BOM]) ? head.subarray(3) : head;
  if (!looksLikeText(body)) return 'unknown';
  const start = body.toString('latin1').trimStart();
  if (/^<(\?xml|!--|!DOCTYPE|[A-Za-z_])/i.test(start)) return 'xml';
  if (start.startsWith('{') || start.startsWith('[')) return 'json';
  return start.length > 0 ? 'text' : 'unknown';
}
