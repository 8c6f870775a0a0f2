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
  // UTF-16 and UTF-32 text is reported as text so the encoding check can say so in words.
  if (detectWideText(head)) return 'text';
  const body = startsWith(head, [...UTF8_BOM]) ? head.subarray(3) : head;
  if (!looksLikeText(body)) return 'unknown';
  const start = body.toString('latin1').trimStart();
  if (/^<(\?xml|!--|!DOCTYPE|[A-Za-z_])/i.test(start)) return 'xml';
  if (start.startsWith('{') || start.startsWith('[')) return 'json';
  return start.length > 0 ? 'text' : 'unknown';
}

/** A text encoding other than UTF-8 that has NULs in ASCII text, and whether a BOM announced it. */
export interface WideText {
  encoding: 'UTF-16LE' | 'UTF-16BE' | 'UTF-32LE' | 'UTF-32BE';
  bom: boolean;
}

/** How many leading bytes the NUL pattern of BOM-less UTF-16 or UTF-32 is looked for in. */
const SNIFF_BYTES = 512;

/** Share of code units of `width` bytes in `head` whose bytes are non-NUL exactly at `at`. */
function shareShaped(head: Buffer, width: number, at: number): number {
  const units = Math.floor(Math.min(head.length, SNIFF_BYTES) / width);
  if (units < 2) return 0;
  let shaped = 0;
  for (let u = 0; u < units; u++) {
    let ok = true;
    for (let b = 0; b < width && ok; b++) ok = (head[u * width + b] !== 0) === (b === at);
    if (ok) shaped += 1;
  }
  return shaped / units;
}

/**
 * UTF-16 or UTF-32 text, by its byte order mark or, without one, by the NULs its ASCII characters
 * carry (`a` is `61 00` in UTF-16LE): at least three code units in four shaped so. UTF-8 text
 * never holds a NUL, so only files that are not UTF-8 text anyway can be taken for wide text.
 */
export function detectWideText(head: Buffer): WideText | undefined {
  if (startsWith(head, [0xff, 0xfe, 0x00, 0x00])) return { encoding: 'UTF-32LE', bom: true };
  if (startsWith(head, [0x00, 0x00, 0xfe, 0xff])) return { encoding: 'UTF-32BE', bom: true };
  if (startsWith(head, [0xff, 0xfe])) return { encoding: 'UTF-16LE', bom: true };
  if (startsWith(head, [0xfe, 0xff])) return { encoding: 'UTF-16BE', bom: true };
  const shapes: [WideText['encoding'], number, number][] = [
    ['UTF-32LE', 4, 0],
    ['UTF-32BE', 4, 3],
    ['UTF-16LE', 2, 0],
    ['UTF-16BE', 2, 1],
  ];
  const found = shapes.find(([, width, at]) => shareShaped(head, width, at) >= 0.75);
  return found ? { encoding: found[0], bom: false } : undefined;
}
