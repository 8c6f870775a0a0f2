/**
 * The intake modes a chaos run or a crash test drives, each as a drop folder's configuration and a
 * maker of distinct inputs. An input is a document set: the files dropped together (a PDF and its
 * sidecar, loose PDFs and their index) and the documents the service must end with, one job each.
 * Documents are matched to jobs by the deterministic job name: the SHA-256 of the file the
 * journal item is made of, and the payload row inside it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import yazl from 'yazl';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { recipientLines } from '../../test/support/pdf-recipient.js';

export interface DroppedFile {
  name: string;
  content: Buffer;
}

export interface ExpectedDocument {
  /** The payload row inside the item's file; undefined for a file that is its own job. */
  rowIndex: number | undefined;
  /** Upload modes: the MD5 of the bytes the job must hold. Payload-word jobs have no upload. */
  uploadMd5?: string;
}

export interface DocumentSet {
  /** The file the journal item is made of (the PDF, the CSV, the ZIP, the index). */
  itemName: string;
  itemSha256: string;
  itemMd5: string;
  /** Every file dropped for this set, the item's file last (companions first). */
  files: DroppedFile[];
  documents: ExpectedDocument[];
  /** A routed mode: the workflow and company its route says every job of this set must have. */
  route?: RoutedTo;
}

/** Where a route sends a document: a workflow, as a company (the partner's own without a managed company). */
interface RoutedTo {
  workflowId: string;
  companyId: string;
}

export interface ChaosMode {
  name: string;
  /** The drop folder's settings besides name, source, archive and error folders. */
  folder: Record<string, unknown>;
  make(index: number, tag: string): Promise<DocumentSet>;
  /** Sets must be dropped one at a time (a fixed index name in the folder). */
  oneSetAtATime?: boolean;
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const pad = (i: number) => String(i).padStart(5, '0');

/** A one-page PDF with `text` and the recipient lines the seeded PDF workflows read. */
export async function makePdf(text: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  [text, ...recipientLines()].forEach((line, i) => {
    page.drawText(line, { x: 50, y: 780 - 16 * i, size: 12, font });
  });
  return Buffer.from(await doc.save());
}

export async function zipOf(entries: DroppedFile[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) zip.addBuffer(entry.content, entry.name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function set(
  item: DroppedFile,
  documents: ExpectedDocument[],
  companions: DroppedFile[] = [],
  route?: RoutedTo,
): DocumentSet {
  return {
    itemName: item.name,
    itemSha256: sha256(item.content),
    itemMd5: md5(item.content),
    files: [...companions, item],
    documents,
    ...(route ? { route } : {}),
  };
}

let rowsPerSet = 3;

/** Documents in a set of a payload-word, ZIP or batch mode (3 by default; `--rows`). */
export function setRowsPerSet(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new Error(`rows must be a whole number >= 1, not ${n}`);
  rowsPerSet = n;
}
const rows = (n: number) => Array.from({ length: n }, (_, i) => i);
const UBL = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/base-example.xml', import.meta.url));

// The seeded payload-pdf workflow collects payments: every row names an amount, a due date, a reference.
const PDF_PAYLOAD_HEADER =
  'file;ADDRESS_COMPANY_NAME;ADDRESS_STREET;ADDRESS_STREET_NUMBER;ADDRESS_POSTAL_CODE;ADDRESS_CITY;' +
  'ADDRESS_COUNTRY_CODE;INVOICE_AMOUNT;INVOICE_DUE_DATE;INVOICE_COMMUNICATION';
const pdfPayloadRow = (file: string, company: string) =>
  `${file};${company};Rue de la Loi;16;1000;Brussels;BE;12.50;2026-12-15;REF-${company.replaceAll(' ', '')}`;

const SIDECAR = fileURLToPath(
  new URL('../../samples/payload-pdf-print/letter-with-payment.json', import.meta.url),
);

/** The sample sidecar, for another company (the workflow, job name and file name come from the folder). */
function sidecarFor(company: string): string {
  const sample = JSON.parse(readFileSync(SIDECAR, 'utf8')) as {
    payload: { channelIdentifiers: { kind: string; value: string }[] };
  };
  for (const id of sample.payload.channelIdentifiers) {
    if (id.kind === 'ADDRESS_COMPANY_NAME') id.value = company;
  }
  return JSON.stringify({ payload: sample.payload });
}

/**
 * The routed tree: one folder whose file names carry the company, in turn an `acme-` and a
 * `globex-` PDF (the `{company}` route through the companies table, each company to its own
 * workflow: a workflow belongs to one company), a `partner-` PDF (the partner's own workflow) and
 * a `partner-…-credit` PDF (the credit route, first in the list: another workflow of the
 * partner). Three companies, each job checked against the company the sandbox recorded for it.
 */
const ROUTED_FOLDER = {
  workflowId: SEED.workflows.pdfEmail,
  routes: [
    { match: '*-credit.pdf', workflowId: SEED.workflows.pdfPrint },
    { match: 'partner-*.pdf', workflowId: SEED.workflows.pdfEmail },
    { match: '{company}-*.pdf' },
  ],
  companies: {
    acme: { managedCompanyId: SEED.managedCompanyId, workflowId: SEED.workflows.managedPdfEmail },
    globex: {
      managedCompanyId: SEED.secondManagedCompanyId,
      workflowId: SEED.workflows.secondManagedPdfEmail,
    },
  },
};

const ROUTED_KINDS = [
  {
    name: (i: number) => `acme-${pad(i)}.pdf`,
    to: { workflowId: SEED.workflows.managedPdfEmail, companyId: SEED.managedCompanyId },
  },
  {
    name: (i: number) => `globex-${pad(i)}.pdf`,
    to: { workflowId: SEED.workflows.secondManagedPdfEmail, companyId: SEED.secondManagedCompanyId },
  },
  {
    name: (i: number) => `partner-${pad(i)}.pdf`,
    to: { workflowId: SEED.workflows.pdfEmail, companyId: SEED.partnerCompanyId },
  },
  {
    name: (i: number) => `partner-${pad(i)}-credit.pdf`,
    to: { workflowId: SEED.workflows.pdfPrint, companyId: SEED.partnerCompanyId },
  },
] as const;

export const CHAOS_MODES: readonly ChaosMode[] = [
  {
    name: 'pdf',
    folder: { workflowId: SEED.workflows.pdfEmail },
    async make(i, tag) {
      const pdf = { name: `doc-${pad(i)}.pdf`, content: await makePdf(`document ${i} ${tag}`) };
      return set(pdf, [{ rowIndex: undefined, uploadMd5: md5(pdf.content) }]);
    },
  },
  {
    name: 'routed',
    folder: ROUTED_FOLDER,
    async make(i, tag) {
      const kind = ROUTED_KINDS[i % ROUTED_KINDS.length]!;
      const pdf = { name: kind.name(i), content: await makePdf(`routed ${i} ${tag}`) };
      return set(pdf, [{ rowIndex: undefined, uploadMd5: md5(pdf.content) }], [], { ...kind.to });
    },
  },
  {
    name: 'zip-pdfs',
    folder: { workflowId: SEED.workflows.pdfEmail },
    async make(i, tag) {
      const entries = await Promise.all(
        rows(rowsPerSet).map(async (r) => ({
          name: `page-${r}.pdf`,
          content: await makePdf(`zip ${i} ${r} ${tag}`),
        })),
      );
      const zip = { name: `bundle-${pad(i)}.zip`, content: await zipOf(entries) };
      return set(zip, [{ rowIndex: undefined, uploadMd5: md5(zip.content) }]);
    },
  },
  {
    name: 'data-csv',
    folder: { workflowId: SEED.workflows.dataFile },
    async make(i, tag) {
      const csv = Buffer.from(
        `customerId;name;email;amount\nC${pad(i)};Chaos ${tag};c${i}@example.com;${i}.00\n`,
      );
      const file = { name: `customers-${pad(i)}.csv`, content: csv };
      return set(file, [{ rowIndex: undefined, uploadMd5: md5(csv) }]);
    },
  },
  {
    name: 'data-xml',
    folder: { workflowId: SEED.workflows.dataFile },
    async make(i, tag) {
      const xml = Buffer.from(
        `<?xml version="1.0" encoding="UTF-8"?>\n<customers><customer id="C${pad(i)}"><name>${tag}</name><email>c${i}@example.com</email><amount>1.00</amount></customer></customers>\n`,
      );
      const file = { name: `customers-${pad(i)}.xml`, content: xml };
      return set(file, [{ rowIndex: undefined, uploadMd5: md5(xml) }]);
    },
  },
  {
    name: 'ubl',
    folder: { workflowId: SEED.workflows.ubl },
    async make(i, tag) {
      const xml = Buffer.from(
        readFileSync(UBL, 'utf8').replace(
          '<cbc:ID>Snippet1</cbc:ID>',
          `<cbc:ID>CHAOS-${pad(i)}-${tag}</cbc:ID>`,
        ),
      );
      const file = { name: `invoice-${pad(i)}.xml`, content: xml };
      return set(file, [{ rowIndex: undefined, uploadMd5: md5(xml) }]);
    },
  },
  {
    name: 'word-csv',
    folder: { workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    async make(i, tag) {
      const lines = rows(rowsPerSet).map((r) => `w${i}-${r}@example.com;${tag}-${r}`);
      const csv = Buffer.from(`EMAIL_ADDRESS;data.name\r\n${lines.join('\r\n')}\r\n`);
      return set(
        { name: `letters-${pad(i)}.csv`, content: csv },
        rows(rowsPerSet).map((r) => ({ rowIndex: r })),
      );
    },
  },
  {
    name: 'word-json',
    folder: { workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    async make(i, tag) {
      const requests = rows(rowsPerSet).map((r) => ({
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: `j${i}-${r}@example.com` }],
          extraInfoIdentifiers: [],
          templateData: { tag: `${tag}-${r}` },
        },
      }));
      return set(
        { name: `letters-${pad(i)}.json`, content: Buffer.from(JSON.stringify(requests)) },
        rows(rowsPerSet).map((r) => ({ rowIndex: r })),
      );
    },
  },
  {
    name: 'word-xml',
    folder: {
      workflowId: SEED.workflows.payloadWordEmail,
      mode: 'payload-word',
      mapping: {
        xml: { recordPath: 'Letters/Letter', fields: { Email: 'EMAIL_ADDRESS', Name: 'data.name' } },
      },
    },
    async make(i, tag) {
      const letters = rows(rowsPerSet).map(
        (r) => `<Letter><Email>x${i}-${r}@example.com</Email><Name>${tag}-${r}</Name></Letter>`,
      );
      const xml = Buffer.from(`<?xml version="1.0"?><Letters>${letters.join('')}</Letters>`);
      return set(
        { name: `letters-${pad(i)}.xml`, content: xml },
        rows(rowsPerSet).map((r) => ({ rowIndex: r })),
      );
    },
  },
  {
    name: 'pdf-sidecar',
    folder: {
      workflowId: SEED.workflows.payloadPdfPrint,
      mode: 'payload-pdf',
      payloadPdf: { pairing: 'sidecar', sidecarExtension: '.json' },
    },
    async make(i, tag) {
      const pdf = { name: `letter-${pad(i)}.pdf`, content: await makePdf(`letter ${i} ${tag}`) };
      const sidecar = { name: `letter-${pad(i)}.json`, content: Buffer.from(sidecarFor(`Co ${i}`)) };
      return set(pdf, [{ rowIndex: 0, uploadMd5: md5(pdf.content) }], [sidecar]);
    },
  },
  {
    name: 'pdf-batch',
    folder: {
      workflowId: SEED.workflows.payloadPdfPrint,
      mode: 'payload-pdf',
      payloadPdf: { pairing: 'sidecar', sidecarExtension: '.json' },
    },
    async make(i, tag) {
      const pdfs = await Promise.all(
        rows(rowsPerSet).map(async (r) => ({
          name: `p${r}.pdf`,
          content: await makePdf(`batch ${i} ${r} ${tag}`),
        })),
      );
      const index = [PDF_PAYLOAD_HEADER, ...pdfs.map((p, r) => pdfPayloadRow(p.name, `Co ${i}-${r}`))];
      const zip = {
        name: `batch-${pad(i)}.zip`,
        content: await zipOf([
          { name: 'index.csv', content: Buffer.from(`${index.join('\r\n')}\r\n`) },
          ...pdfs,
        ]),
      };
      return set(
        zip,
        pdfs.map((p, r) => ({ rowIndex: r, uploadMd5: md5(p.content) })),
      );
    },
  },
  {
    name: 'pdf-index',
    oneSetAtATime: true,
    folder: {
      workflowId: SEED.workflows.payloadPdfPrint,
      mode: 'payload-pdf',
      payloadPdf: { pairing: 'index-csv' },
    },
    async make(i, tag) {
      const pdfs = await Promise.all(
        rows(rowsPerSet).map(async (r) => ({
          name: `s${pad(i)}-${r}.pdf`,
          content: await makePdf(`indexed ${i} ${r} ${tag}`),
        })),
      );
      const index = [PDF_PAYLOAD_HEADER, ...pdfs.map((p, r) => pdfPayloadRow(p.name, `Co ${i}-${r}`))];
      const indexFile = { name: 'index.csv', content: Buffer.from(`${index.join('\r\n')}\r\n`) };
      return set(
        indexFile,
        pdfs.map((p, r) => ({ rowIndex: r, uploadMd5: md5(p.content) })),
        pdfs,
      );
    },
  },
];

export function modeNamed(name: string): ChaosMode {
  const mode = CHAOS_MODES.find((m) => m.name === name);
  if (!mode) throw new Error(`unknown mode ${name}; known: ${CHAOS_MODES.map((m) => m.name).join(', ')}`);
  return mode;
}
