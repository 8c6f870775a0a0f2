import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import Papa from 'papaparse';
import { PDFDocument } from 'pdf-lib';
import yauzl from 'yauzl';
import type { PayloadJobRequest } from '../domain/wire.js';

/**
 * What an uploaded file becomes (decisions.md, Jobs): the sending events it yields, each with its
 * recipient, the text that decides its deterministic outcome, and its original document. A file
 * the workflow cannot read yields an error instead, and the job fails.
 */
export interface ContentItem {
  sourceRef: string;
  recipient: string;
  /** Text searched for "reject"/"fail" to choose the outcome when none is forced. */
  outcomeHint: string;
  /** The item's own original; absent when the uploaded file itself is the original. */
  original?: { name: string; contentType: string; data: Buffer };
}

export type ContentResult = { ok: true; items: ContentItem[] } | { ok: false; code: string; message: string };

/** In-memory parsing is fine for a sandbox, within these bounds. */
const MAX_PARSE_BYTES = 256 * 1024 * 1024;
const MAX_ZIP_ENTRIES = 10_000;
const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;

const fail = (code: string, message: string): ContentResult => ({ ok: false, code, message });

export async function analyseUpload(input: {
  filePath: string;
  filename: string;
  inputSourceType: string;
}): Promise<ContentResult> {
  const ext = path.extname(input.filename).toLowerCase();
  try {
    switch (input.inputSourceType) {
      case 'PDF':
      case 'PAYLOAD_PDF':
        if (ext === '.zip' && input.inputSourceType === 'PDF')
          return await zipItems(input.filePath, '.pdf', pdfItem);
        return await pdfFileItem(input.filePath, input.filename);
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

/** The single sending event of a payload job. */
export function payloadItem(payload: PayloadJobRequest['payload'], filename: string): ContentItem {
  const ids = payload.channelIdentifiers;
  const recipient =
    ids.find((c) => c.kind === 'EMAIL_ADDRESS')?.value ??
    ids.find((c) => c.kind === 'ADDRESS_COMPANY_NAME')?.value ??
    ids.find((c) => c.kind === 'NATIONAL_REGISTER_NUMBER' || c.kind === 'COMPANY_IDENTIFICATION_NUMBER')
      ?.value ??
    ids[0]?.value ??
    filename;
  const hint = [
    filename,
    ...ids.map((c) => c.value),
    ...payload.extraInfoIdentifiers.map((e) => e.value),
  ].join(' ');
  return { sourceRef: filename, recipient, outcomeHint: hint };
}

async function readBounded(filePath: string): Promise<Buffer> {
  const { size } = await stat(filePath);
  if (size > MAX_PARSE_BYTES) throw new Error(`file of ${size} bytes is over the sandbox's parse limit`);
  return readFile(filePath);
}

function collect(results: (ContentItem | string)[]): ContentResult {
  const problems = results.filter((r): r is string => typeof r === 'string');
  if (problems.length > 0) return fail('UNREADABLE_FILE', problems.join('; '));
  const items = results as ContentItem[];
  if (items.length === 0) return fail('NO_DOCUMENTS', 'the file holds no document to send');
  return { ok: true, items };
}

async function pdfMeta(data: Buffer, name: string): Promise<ContentItem | string> {
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

async function pdfFileItem(filePath: string, filename: string): Promise<ContentResult> {
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

async function pdfItem(data: Buffer, entryPath: string): Promise<ContentItem | string> {
  const item = await pdfMeta(data, entryPath);
  if (typeof item === 'string') return item;
  return { ...item, original: { name: path.basename(entryPath), contentType: 'application/pdf', data } };
}

/** One item per entry with the extension; other entries (folders, readme files) are ignored. */
async function zipItems(
  filePath: string,
  ext: string,
  toItem: (data: Buffer, entryPath: string) => Promise<ContentItem | string> | ContentItem | string,
): Promise<ContentResult> {
  const zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: true });
  const results: (ContentItem | string)[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/') || path.extname(entry.fileName).toLowerCase() !== ext) continue;
      if (results.length >= MAX_ZIP_ENTRIES)
        return fail('TOO_MANY_ENTRIES', `more than ${MAX_ZIP_ENTRIES} entries`);
      if (entry.uncompressedSize > MAX_PARSE_BYTES) {
        results.push(`${entry.fileName} is over the sandbox's parse limit`);
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      results.push(await toItem(Buffer.concat(chunks), entry.fileName));
    }
  } finally {
    zip.close();
  }
  return collect(results);
}

function csvItems(data: Buffer, filename: string): ContentResult {
  const parsed = Papa.parse<Record<string, string>>(data.toString('utf8').replace(/^\uFEFF/, ''), {
    header: true,
    skipEmptyLines: 'greedy',
  });
  const fatal = parsed.errors.find((e) => e.type === 'Delimiter' && parsed.data.length === 0);
  if (fatal) return fail('UNREADABLE_FILE', `${filename}: ${fatal.message}`);
  const fields = parsed.meta.fields ?? [];
  const recipientField = fields.find((f) => /mail|recipient/i.test(f)) ?? fields[0];
  const delimiter = parsed.meta.delimiter;
  const header = Papa.unparse([fields], { delimiter });
  return collect(
    parsed.data.map((row, i) => {
      const values = fields.map((f) => row[f] ?? '');
      const text = `${header}\r\n${Papa.unparse([values], { delimiter })}\r\n`;
      return {
        sourceRef: `${filename}#row=${i + 1}`,
        recipient: (recipientField ? row[recipientField] : undefined) || `row ${i + 1}`,
        outcomeHint: values.join(' '),
        original: {
          name: `${path.basename(filename, '.csv')}-row-${i + 1}.csv`,
          contentType: 'text/csv',
          data: Buffer.from(text),
        },
      };
    }),
  );
}

function checkXml(text: string, name: string): string | undefined {
  const valid = XMLValidator.validate(text);
  return valid === true
    ? undefined
    : `${name} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`;
}

type OrderedNode = Record<string, unknown>;
const isElement = (node: OrderedNode) =>
  Object.keys(node).some((k) => !k.startsWith('?') && !k.startsWith('#') && k !== ':@');
const tagOf = (node: OrderedNode) => Object.keys(node).find((k) => k !== ':@') ?? '';

/** XML data file: one item per child element of the root (one record each). */
function xmlDataItems(data: Buffer, filename: string): ContentResult {
  const text = data.toString('utf8');
  const invalid = checkXml(text, filename);
  if (invalid) return fail('UNREADABLE_FILE', invalid);
  const options = { preserveOrder: true, ignoreAttributes: false, commentPropName: '#comment' };
  const nodes = new XMLParser(options).parse(text) as OrderedNode[];
  const root = nodes.find(isElement);
  if (!root) return fail('UNREADABLE_FILE', `${filename} has no root element`);
  const children = ((root[tagOf(root)] as OrderedNode[]) ?? []).filter(isElement);
  const builder = new XMLBuilder(options);
  return collect(
    children.map((child, i) => {
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build([child]) as string}`;
      return {
        sourceRef: `${filename}#record=${i + 1}`,
        recipient: EMAIL.exec(xml)?.[0] ?? `${tagOf(child)} ${i + 1}`,
        outcomeHint: xml.replace(/<[^>]*>/g, ' '),
        original: {
          name: `${path.basename(filename, '.xml')}-record-${i + 1}.xml`,
          contentType: 'application/xml',
          data: Buffer.from(xml),
        },
      };
    }),
  );
}

function child(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  if (value && typeof value === 'object' && '#text' in value)
    return String((value as { '#text': unknown })['#text']);
  return undefined;
}

/** UBL: one item per document; the root must be an Invoice or a CreditNote. */
function ublItem(data: Buffer, name: string): ContentItem | string {
  const text = data.toString('utf8');
  const invalid = checkXml(text, name);
  if (invalid) return invalid;
  const parsed = new XMLParser({
    removeNSPrefix: true,
    ignoreAttributes: false,
    attributeNamePrefix: '@',
  }).parse(text) as Record<string, Record<string, unknown>>;
  const rootName = ['Invoice', 'CreditNote'].find((k) => k in parsed);
  if (!rootName) return `${name} is not a UBL Invoice or CreditNote`;
  const doc = parsed[rootName];
  const party = child(child(doc, 'AccountingCustomerParty'), 'Party');
  const endpoint = child(party, 'EndpointID');
  const scheme =
    endpoint && typeof endpoint === 'object' ? (endpoint as Record<string, unknown>)['@schemeID'] : undefined;
  const endpointText = textOf(endpoint);
  const recipient = endpointText
    ? scheme
      ? `${String(scheme)}:${endpointText}`
      : endpointText
    : 'unknown receiver';
  const partyName =
    textOf(child(child(party, 'PartyName'), 'Name')) ??
    textOf(child(child(party, 'PartyLegalEntity'), 'RegistrationName')) ??
    '';
  return {
    sourceRef: name,
    recipient,
    outcomeHint: [name, recipient, textOf(child(doc, 'ID')) ?? '', partyName].join(' '),
    original: { name: path.basename(name), contentType: 'application/xml', data },
  };
}
