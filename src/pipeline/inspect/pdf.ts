/**
 * PDF checks. Memory policy: a PDF up to `parseMaxBytes` (default 16 MiB) is read and parsed with
 * pdf-lib (page count, encryption, structure). A larger one is never read whole: its first KiB
 * must hold `%PDF-`, its last 64 KiB `%%EOF`, neither end may carry an `/Encrypt` entry, and its
 * structure is read from its end (pdf-structure.ts): startxref, the cross-reference sections and
 * trailers, no /Encrypt however its name is written, the catalog and the page tree root at the
 * offsets given. Its pages are not counted, nor their content read.
 * pdf-lib's cost grows with the objects of a PDF, not its stream bytes.
 * Figures: docs/benchmarks.md#figures-behind-choices-in-the-code.
 */
import { open, readFile } from 'node:fs/promises';
import type { PDFDocument } from 'pdf-lib';
import { type InputRejection, mib, quoteName, reject } from './codes.js';
import { overLimit, parseLimits } from './limits.js';
import { PdfStructure } from './pdf-structure.js';

export const PDF_PARSE_MAX_BYTES = 16 * 1024 * 1024;
const END_BYTES = 64 * 1024;
const PDF_MAGIC = Buffer.from('%PDF-');
const EOF_MARK = Buffer.from('%%EOF');
const ENCRYPT_ENTRY = /\/Encrypt\s*(\d+\s+\d+\s+R|<<)/;

export interface PdfDetails {
  /** Page count; absent when the file was too large to parse. */
  pages?: number;
  parsed: boolean;
}

export type PdfCheck = { ok: true; details: PdfDetails } | InputRejection;

/** Checks that need only the two ends of the file. */
function checkEnds(head: Buffer, tail: Buffer, fileName: string): InputRejection | undefined {
  if (head.subarray(0, 1024).indexOf(PDF_MAGIC) === -1) {
    return reject(
      'DOCEX_INPUT_PDF_CORRUPT',
      `${quoteName(fileName)} does not start with a PDF header (%PDF-).`,
    );
  }
  if (tail.indexOf(EOF_MARK) === -1) {
    return reject(
      'DOCEX_INPUT_PDF_TRUNCATED',
      `${quoteName(fileName)} has no %%EOF marker at its end: the PDF is truncated or was still being written.`,
    );
  }
  if (ENCRYPT_ENTRY.test(tail.toString('latin1')) || ENCRYPT_ENTRY.test(head.toString('latin1'))) {
    return encrypted(fileName);
  }
  return undefined;
}

const encrypted = (fileName: string) =>
  reject(
    'DOCEX_INPUT_PDF_ENCRYPTED',
    `${quoteName(fileName)} is an encrypted or password-protected PDF; the service cannot process it. ` +
      'Export it without a password.',
  );

/**
 * Pages of the page tree, each node visited once, without recursion; or why the tree is unusable.
 * Not pdf-lib's getPageCount: it walks every path, and a 6.7 KB tree whose 64 levels each list
 * the next level twice has 2^64 of them (the event loop blocked, then V8 aborted the process).
 */
function countPages(doc: PDFDocument, lib: typeof import('pdf-lib')): number | string {
  const { PDFArray, PDFDict, PDFName, PDFRef } = lib;
  // A catalog that is missing or not a dictionary is whatever the trailer's /Root points at.
  const catalog: unknown = doc.catalog;
  if (!(catalog instanceof PDFDict)) return 'its catalog does not lead to a list of pages';
  const root = catalog.get(PDFName.of('Pages'));
  if (!(root instanceof PDFRef)) return 'its catalog does not lead to a list of pages';
  const seen = new Set<string>();
  const stack = [root];
  let pages = 0;
  while (stack.length > 0) {
    const ref = stack.pop() as ReturnType<typeof PDFRef.of>;
    const key = ref.toString();
    if (seen.has(key)) return `its page tree lists object ${key} more than once`;
    seen.add(key);
    const node = doc.context.lookup(ref);
    if (!(node instanceof PDFDict)) return `page tree object ${key} is not a dictionary`;
    const type = node.get(PDFName.of('Type'));
    if (type === PDFName.of('Page')) {
      pages += 1;
      continue;
    }
    const kids = node.lookup(PDFName.of('Kids'));
    if (type !== PDFName.of('Pages') || !(kids instanceof PDFArray)) {
      return `page tree object ${key} is neither a page nor a list of pages`;
    }
    for (const kid of kids.asArray()) {
      if (!(kid instanceof PDFRef)) return `page tree object ${key} lists a page that is not a reference`;
      stack.push(kid);
    }
  }
  return pages;
}

/** What pdf-lib may still inflate while one PDF loads; `hit` once it asked for more. */
const inflation = { left: Number.POSITIVE_INFINITY, hit: false };
let inflationMetered: Promise<void> | undefined;
/** Why a cross-reference stream of the PDF loading is refused (entries its bytes do not hold). */
const xref: { broken: string | undefined } = { broken: undefined };
let xrefMetered: Promise<void> | undefined;
/**
 * Rows a cross-reference stream may list beyond what its bytes hold: pdf-lib reads a missing row
 * as a free object, and a writer's count off by a few is still read as before.
 */
const XREF_UNBACKED_ROWS = 1024;

/**
 * Every stream pdf-lib decodes (object and cross-reference streams, at load) grows its buffer
 * through DecodeStream.ensureBuffer: metered there, so a 2 MB PDF whose object stream inflates to
 * 2 GiB stops at inspection.limits.pdfInflate. pdf-lib swallows the error and carries on parsing,
 * hence the `hit` flag.
 */
function meterInflation(): Promise<void> {
  inflationMetered ??= import('pdf-lib/cjs/core/streams/DecodeStream.js').then((mod) => {
    // CommonJS seen from ESM: the class is the module's `default` export, itself under `default`.
    type Metered = { prototype: { ensureBuffer(requested: number): Uint8Array } };
    const exported = mod as unknown as { default: Metered & { default?: Metered } };
    const proto = (exported.default.default ?? exported.default).prototype;
    const ensureBuffer = proto.ensureBuffer;
    const grown = new WeakMap<object, number>();
    proto.ensureBuffer = function (this: object, requested: number) {
      const before = grown.get(this) ?? 0;
      if (requested > before) {
        inflation.left -= requested - before;
        grown.set(this, requested);
        if (inflation.left < 0) {
          inflation.hit = true;
          throw new Error('inflation limit');
        }
      }
      return ensureBuffer.call(this, requested);
    };
  });
  return inflationMetered;
}

type XRefStreamParser = {
  subsections: { firstObjectNumber: number; length: number }[];
  byteWidths: number[];
  bytes: { length: number };
  parseEntries(): unknown[];
};

/**
 * pdf-lib builds an entry for every object a cross-reference stream lists, whether or not its
 * bytes hold a row for it: a 150-byte PDF listing 2^31 objects in no bytes (/W [0 0 0]) grew the
 * worker to its heap cap, and with it the agent's resident set. A stream listing more rows than
 * its bytes hold is refused as corrupt before any entry is built, as the structure check of a
 * large PDF does. pdf-lib swallows the error and carries on parsing, hence `xref.broken`.
 */
function meterXrefStreams(): Promise<void> {
  xrefMetered ??= import('pdf-lib/cjs/core/parser/PDFXRefStreamParser.js').then((mod) => {
    type Parser = { prototype: XRefStreamParser };
    const exported = mod as unknown as { default: Parser & { default?: Parser } };
    const proto = (exported.default.default ?? exported.default).prototype;
    const parseEntries = proto.parseEntries;
    proto.parseEntries = function (this: XRefStreamParser) {
      const width = this.byteWidths.reduce((sum, w) => sum + Math.max(0, w), 0);
      const listed = this.subsections.reduce((sum, s) => sum + Math.max(0, s.length), 0);
      const held = width === 0 ? 0 : Math.floor(this.bytes.length / width);
      if (listed - held > XREF_UNBACKED_ROWS) {
        xref.broken = `its cross-reference stream lists ${listed} objects in ${this.bytes.length} bytes`;
        throw new Error(xref.broken);
      }
      return parseEntries.call(this);
    };
  });
  return xrefMetered;
}

/** Full check of a PDF held in memory (a dropped file under the limit, or a ZIP entry). */
export async function checkPdfBytes(bytes: Buffer, fileName: string): Promise<PdfCheck> {
  const ends = checkEnds(bytes.subarray(0, END_BYTES), bytes.subarray(-END_BYTES), fileName);
  if (ends) return ends;
  // Loaded at the first PDF small enough to parse: an agent that never parses one
  // (large files only, other formats) never holds it.
  const lib = await import('pdf-lib');
  const { ParseSpeeds, PDFDocument: Pdf } = lib;
  await Promise.all([meterInflation(), meterXrefStreams()]);
  inflation.left = parseLimits().pdfInflate;
  inflation.hit = false;
  xref.broken = undefined;
  const brokenXref = (): InputRejection | undefined =>
    xref.broken === undefined
      ? undefined
      : reject('DOCEX_INPUT_PDF_CORRUPT', `${quoteName(fileName)} is not a readable PDF: ${xref.broken}.`);
  let doc: PDFDocument;
  try {
    doc = await Pdf.load(bytes, {
      ignoreEncryption: true,
      updateMetadata: false,
      parseSpeed: ParseSpeeds.Fast,
    });
  } catch (err) {
    if (inflation.hit) return overLimit(fileName, 'has streams that inflate', 'pdfInflate');
    const broken = brokenXref();
    if (broken) return broken;
    return reject(
      'DOCEX_INPUT_PDF_CORRUPT',
      `${quoteName(fileName)} is not a readable PDF: ${(err as Error).message.split('\n')[0]}.`,
    );
  }
  if (inflation.hit) return overLimit(fileName, 'has streams that inflate', 'pdfInflate');
  const broken = brokenXref();
  if (broken) return broken;
  if (doc.isEncrypted) return encrypted(fileName);
  let pages: number | string;
  try {
    pages = countPages(doc, lib);
  } catch (err) {
    // pdf-lib's objects of a damaged file can be anything: any surprise is a corrupt PDF, not a crash.
    pages = (err as Error).message.split('\n')[0] ?? 'unreadable';
  }
  if (typeof pages === 'string') {
    return reject('DOCEX_INPUT_PDF_CORRUPT', `${quoteName(fileName)} has no readable page tree: ${pages}.`);
  }
  if (pages === 0) return reject('DOCEX_INPUT_PDF_EMPTY', `${quoteName(fileName)} is a PDF with no pages.`);
  return { ok: true, details: { pages, parsed: true } };
}

/** A PDF too large to parse whole: its two ends, then its structure (pdf-structure.ts). */
async function checkLargePdf(
  path: string,
  fileName: string,
  size: number,
): Promise<InputRejection | undefined> {
  const handle = await open(path, 'r');
  try {
    const readAt = async (position: number, length: number) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      return buffer.subarray(0, bytesRead);
    };
    const head = await readAt(0, END_BYTES);
    const tail = await readAt(Math.max(0, size - END_BYTES), END_BYTES);
    const ends = checkEnds(head, tail, fileName);
    if (ends) return ends;
    const first = new PdfStructure(readAt, size, parseLimits().pdfInflate);
    let verdict = await first.check(tail);
    // Junk before %PDF- (allowed in the first KiB): offsets may count from the header instead.
    const junk = head.indexOf(PDF_MAGIC);
    if (!verdict.ok && verdict.problem === 'corrupt' && junk > 0) {
      const shifted = await new PdfStructure(readAt, size, first.inflateLeft, junk).check(tail);
      if (shifted.ok || shifted.problem !== 'corrupt') verdict = shifted;
    }
    if (verdict.ok) return undefined;
    if (verdict.problem === 'encrypted') return encrypted(fileName);
    if (verdict.problem === 'inflate') return overLimit(fileName, 'has streams that inflate', 'pdfInflate');
    if (verdict.problem === 'empty') {
      return reject('DOCEX_INPUT_PDF_EMPTY', `${quoteName(fileName)} is a PDF with no pages.`);
    }
    return reject(
      'DOCEX_INPUT_PDF_CORRUPT',
      `${quoteName(fileName)} is not a readable PDF: ${verdict.why ?? 'its structure is broken'}.`,
    );
  } finally {
    await handle.close();
  }
}

export async function inspectPdfFile(
  path: string,
  fileName: string,
  size: number,
  parseMaxBytes = PDF_PARSE_MAX_BYTES,
): Promise<PdfCheck> {
  if (size <= parseMaxBytes) return checkPdfBytes(await readFile(path), fileName);
  const rejected = await checkLargePdf(path, fileName, size);
  if (rejected) {
    return {
      ...rejected,
      details: { ...rejected.details, parsed: false, parseMaxBytes: mib(parseMaxBytes) },
    };
  }
  return { ok: true, details: { parsed: false } };
}
