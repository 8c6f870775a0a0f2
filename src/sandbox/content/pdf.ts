import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { findIdentifiers, missingIdentifiersError, type PdfReading } from './pdf-identifiers.js';
import {
  type ContentItem,
  type ContentResult,
  collect,
  EMAIL,
  fail,
  type ItemOrProblem,
  MAX_PARSE_BYTES,
} from './types.js';

/**
 * A PDF's recipient: with `reading` (a PDF workflow that declares channel identifiers), the values
 * found in its text, and a failure naming each one that is absent; without, the e-mail address of
 * its Subject. The metadata and the values found decide the outcome ("reject", "fail").
 */
async function pdfMeta(data: Buffer, name: string, reading?: PdfReading): Promise<ItemOrProblem> {
  if (!data.subarray(0, 1024).includes('%PDF-')) return `${name} is not a PDF`;
  let meta: { subject: string; hint: string };
  try {
    const doc = await PDFDocument.load(data, { ignoreEncryption: true, updateMetadata: false });
    const subject = doc.getSubject() ?? '';
    meta = { subject, hint: [name, subject, doc.getTitle() ?? '', doc.getKeywords() ?? ''].join(' ') };
  } catch (err) {
    return `${name} is not a readable PDF (${(err as Error).message})`;
  }
  const fromSubject = EMAIL.exec(meta.subject)?.[0] ?? (meta.subject || name);
  if (!reading || reading.rules.length === 0)
    return { sourceRef: name, recipient: fromSubject, outcomeHint: meta.hint };

  let pages: string[];
  try {
    pages = await reading.extractor.pages(
      data,
      reading.rules.map((r) => r.label),
    );
  } catch (err) {
    return `the text of ${name} could not be read (${(err as Error).message})`;
  }
  const { found, missing } = findIdentifiers(pages, reading.rules);
  const recipient = found.find((f) => f.kind === 'EMAIL_ADDRESS')?.value ?? found[0]?.value ?? name;
  const item: ContentItem = {
    sourceRef: name,
    recipient,
    outcomeHint: [meta.hint, ...found.map((f) => f.value)].join(' '),
  };
  if (missing.length > 0) item.failure = missingIdentifiersError(name, missing, reading.names);
  return item;
}

export async function pdfFileItems(
  filePath: string,
  filename: string,
  reading?: PdfReading,
): Promise<ContentResult> {
  const { size } = await stat(filePath);
  if (size > MAX_PARSE_BYTES) {
    // Too big to load: check the header only (its identifiers are not looked for).
    const handle = await open(filePath, 'r');
    const head = Buffer.alloc(1024);
    try {
      await handle.read(head, 0, 1024, 0);
    } finally {
      await handle.close();
    }
    if (!head.includes('%PDF-')) return fail('UNREADABLE_FILE', `${filename} is not a PDF`);
    return { ok: true, items: [{ sourceRef: filename, recipient: filename, outcomeHint: filename }] };
  }
  return collect([await pdfMeta(await readFile(filePath), filename, reading)]);
}

/** A PDF inside a ZIP: its own original, its own identifiers. */
export async function pdfEntryItem(
  data: Buffer,
  entryPath: string,
  reading?: PdfReading,
): Promise<ItemOrProblem> {
  const item = await pdfMeta(data, entryPath, reading);
  if (typeof item === 'string') return item;
  const withOriginal: ContentItem = {
    ...item,
    original: { name: path.basename(entryPath), contentType: 'application/pdf', data },
  };
  return withOriginal;
}
