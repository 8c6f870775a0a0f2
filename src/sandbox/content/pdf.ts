import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import {
  type ContentItem,
  type ContentResult,
  collect,
  EMAIL,
  fail,
  type ItemOrProblem,
  MAX_PARSE_BYTES,
} from './types.js';

/** A PDF's recipient is the e-mail address in its Subject; its metadata decides the outcome. */
async function pdfMeta(data: Buffer, name: string): Promise<ItemOrProblem> {
  if (!data.subarray(0, 1024).includes('%PDF-')) return `${name} is not a PDF`;
  try {
    const doc = await PDFDocument.load(data, { ignoreEncryption: true, updateMetadata: false });
    const subject = doc.getSubject() ?? '';
    const title = doc.getTitle() ?? '';
    const keywords = doc.getKeywords() ?? '';
    const recipient = EMAIL.exec(subject)?.[0] ?? (subject || name);
    return { sourceRef: name, recipient, outcomeHint: [name, subject, title, keywords].join(' ') };
  } catch (err) {
    return `${name} is not a readable PDF (${(err as Error).message})`;
  }
}

export async function pdfFileItems(filePath: string, filename: string): Promise<ContentResult> {
  const { size } = await stat(filePath);
  if (size > MAX_PARSE_BYTES) {
    // Too big to load: check the header only.
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
  return collect([await pdfMeta(await readFile(filePath), filename)]);
}

/** A PDF inside a ZIP: its own original. */
export async function pdfEntryItem(data: Buffer, entryPath: string): Promise<ItemOrProblem> {
  const item = await pdfMeta(data, entryPath);
  if (typeof item === 'string') return item;
  const withOriginal: ContentItem = {
    ...item,
    original: { name: path.basename(entryPath), contentType: 'application/pdf', data },
  };
  return withOriginal;
}
