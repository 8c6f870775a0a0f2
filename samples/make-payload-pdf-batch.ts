/**
 * Generates the payload-pdf batch sample once (committed): `npx tsx samples/make-payload-pdf-batch.ts`.
 * batch.zip holds three letters and an index.csv naming each letter's print address and payment.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import yazl from 'yazl';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixed = new Date('2026-11-01T09:00:00.000Z');

interface Letter {
  file: string;
  company: string;
  street: string;
  number: string;
  postalCode: string;
  city: string;
  country: string;
  amount: string;
  communication: string;
  customerId: string;
}

const LETTERS: Letter[] = [
  { file: 'letters/letter-2026-0101.pdf', company: 'Acme NV', street: 'Rue de la Loi', number: '16', postalCode: '1000', city: 'Brussels', country: 'BE', amount: '250.00', communication: '+++090/9337/55493+++', customerId: 'C001' },
  { file: 'letters/letter-2026-0102.pdf', company: 'Beta BV', street: 'Damrak', number: '1', postalCode: '1012 LG', city: 'Amsterdam', country: 'NL', amount: '99.95', communication: 'INV-2026-0102', customerId: 'C002' },
  { file: 'letters/letter-2026-0103.pdf', company: 'Gamma SARL', street: 'Rue de Rivoli', number: '99', postalCode: '75001', city: 'Paris', country: 'FR', amount: '1200.00', communication: 'INV-2026-0103', customerId: 'C003' },
];

async function letterPdf(l: Letter): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const title = `Payment request ${path.basename(l.file, '.pdf')}`;
  doc.setTitle(title);
  doc.setSubject(`${l.company}, ${l.street} ${l.number}, ${l.postalCode} ${l.city}, ${l.country}`);
  doc.setProducer('docex-agent samples');
  doc.setCreator('docex-agent samples');
  doc.setCreationDate(fixed);
  doc.setModificationDate(fixed);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText(title, { x: 50, y: 780, size: 18, font });
  const lines = [l.company, `${l.street} ${l.number}`, `${l.postalCode} ${l.city}`, `Amount due: EUR ${l.amount}`];
  lines.forEach((line, i) => page.drawText(line, { x: 50, y: 740 - i * 18, size: 11, font }));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** index.csv the way a European ERP writes it: `;` separated, CRLF. */
function indexCsv(letters: readonly Letter[]): string {
  const header = [
    'file',
    'ADDRESS_COMPANY_NAME',
    'ADDRESS_STREET',
    'ADDRESS_STREET_NUMBER',
    'ADDRESS_POSTAL_CODE',
    'ADDRESS_CITY',
    'ADDRESS_COUNTRY_CODE',
    'INVOICE_AMOUNT',
    'INVOICE_DUE_DATE',
    'INVOICE_COMMUNICATION',
    'extra.customerId',
  ];
  const rows = letters.map((l) =>
    [l.file, l.company, l.street, l.number, l.postalCode, l.city, l.country, l.amount, '2026-12-15', l.communication, l.customerId].join(';'),
  );
  return `${[header.join(';'), ...rows].join('\r\n')}\r\n`;
}

const zip = new yazl.ZipFile();
zip.addBuffer(Buffer.from(indexCsv(LETTERS)), 'index.csv', { mtime: fixed });
for (const l of LETTERS) zip.addBuffer(await letterPdf(l), l.file, { mtime: fixed });
zip.end();
const chunks: Buffer[] = [];
for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
mkdirSync(path.join(here, 'payload-pdf-batch'), { recursive: true });
writeFileSync(path.join(here, 'payload-pdf-batch', 'batch.zip'), Buffer.concat(chunks));
