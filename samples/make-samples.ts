/**
 * Generates the sample files once (they are committed): `npx tsx samples/make-samples.ts`.
 * PDFs carry their recipient as the seeded PDF workflows look for it: a line of text that begins
 * with the workflow's label ("Email: jane.doe@example.com"; PDF_LABELS in src/sandbox/seed.ts),
 * and in their Subject. pdf-email-without-recipient/ holds one without: its sending fails.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import yazl from 'yazl';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixed = new Date('2026-11-01T09:00:00.000Z');

async function pdf(title: string, recipient: string, lines: string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  doc.setSubject(recipient);
  doc.setProducer('docex-agent samples');
  doc.setCreator('docex-agent samples');
  doc.setCreationDate(fixed);
  doc.setModificationDate(fixed);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([595, 842]);
  page.drawText(title, { x: 50, y: 780, size: 18, font });
  lines.forEach((line, i) => {
    page.drawText(line, { x: 50, y: 740 - i * 18, size: 11, font });
  });
  return doc.save({ useObjectStreams: false });
}

function write(rel: string, data: Uint8Array | string): void {
  const file = path.join(here, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
}

async function zip(rel: string, entries: { name: string; data: Uint8Array }[]): Promise<void> {
  const z = new yazl.ZipFile();
  for (const e of entries) z.addBuffer(Buffer.from(e.data), e.name, { mtime: fixed });
  z.end();
  const chunks: Buffer[] = [];
  for await (const chunk of z.outputStream) chunks.push(chunk as Buffer);
  write(rel, Buffer.concat(chunks));
}

const invoice = (n: string, to: string) =>
  pdf(`Invoice ${n}`, to, [`Email: ${to}`, `Invoice number: ${n}`, 'Amount due: EUR 125.00', 'Due date: 2026-12-15']);

write('pdf-email/invoice-2026-0001.pdf', await invoice('2026-0001', 'jane.doe@example.com'));
await zip('pdf-email/invoices-2026-batch.zip', [
  { name: 'invoices/invoice-2026-0002.pdf', data: await invoice('2026-0002', 'john.smith@example.com') },
  { name: 'invoices/invoice-2026-0003.pdf', data: await invoice('2026-0003', 'ana.lopez@example.com') },
  { name: 'invoices/invoice-2026-0004.pdf', data: await invoice('2026-0004', 'li.wei@example.com') },
]);
write(
  'pdf-print/letter-2026-0001.pdf',
  await pdf('Letter 2026-0001', 'Acme NV, Rue de la Loi 16, 1000 Brussels, BE', [
    'Addressee: Acme NV',
    'Street: Rue de la Loi',
    'Street number: 16',
    'Postal code: 1000',
    'City: Brussels',
    'Country: BE',
  ]),
);
write(
  'pdf-registered/notice-2026-0001.pdf',
  await pdf('Formal notice 2026-0001', 'legal@acme.example', [
    'Registered notice',
    'Email: legal@acme.example',
    'Enterprise number: 0123456789',
  ]),
);
write(
  'pdf-docportal/statement-doccle-2026-11.pdf',
  await pdf('Statement November 2026 (Doccle)', 'Doccle', [
    'Monthly statement',
    'Doccle token 1: C001-2026',
    'Doccle token 2: 4F7A-91D2',
  ]),
);
// No "Email:" line: the PDF workflow cannot find its recipient, and the sending fails saying so.
write(
  'pdf-email-without-recipient/invoice-2026-0005.pdf',
  await pdf('Invoice 2026-0005', '', ['To: whoever pays', 'Invoice number: 2026-0005', 'Amount due: EUR 99.00']),
);
write(
  'managed-pdf-email/statement-2026-11.pdf',
  await pdf('Statement November 2026', 'customer@managed.example', ['Monthly statement', 'Email: customer@managed.example']),
);
write(
  'data-file/customers.csv',
  'customerId;name;email;amount\r\nC001;Jane Doe;jane.doe@example.com;125.00\r\nC002;John Smith;john.smith@example.com;80.50\r\nC003;Ana Lopez;ana.lopez@example.com;42.00\r\n',
);
write(
  'data-file/customers.xml',
  `<?xml version="1.0" encoding="UTF-8"?>
<customers>
  <customer id="C001"><name>Jane Doe</name><email>jane.doe@example.com</email><amount>125.00</amount></customer>
  <customer id="C002"><name>John Smith</name><email>john.smith@example.com</email><amount>80.50</amount></customer>
</customers>
`,
);
// A real Peppol BIS Billing 3.0 invoice (OpenPEPPOL example), unchanged.
write('ubl/invoice-base-example.xml', readFileSync(path.join(here, '../../shared/data/peppol-examples/base-example.xml')));

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
write(
  'payload-pdf-print/letter-with-payment.pdf',
  await pdf('Payment request 2026-0007', 'Acme NV', ['Acme NV', 'Rue de la Loi 16', '1000 Brussels', 'Amount due: EUR 250.00']),
);
write(
  'payload-pdf-print/letter-with-payment.json',
  json({
    workflowId: 'wf_payload_pdf_print',
    jobName: 'Payment request 2026-0007',
    filename: 'letter-with-payment.pdf',
    payload: {
      channelIdentifiers: [
        { kind: 'ADDRESS_COMPANY_NAME', value: 'Acme NV' },
        { kind: 'ADDRESS_STREET', value: 'Rue de la Loi' },
        { kind: 'ADDRESS_STREET_NUMBER', value: '16' },
        { kind: 'ADDRESS_POSTAL_CODE', value: '1000' },
        { kind: 'ADDRESS_CITY', value: 'Brussels' },
        { kind: 'ADDRESS_COUNTRY_CODE', value: 'BE' },
        { kind: 'INVOICE_AMOUNT', value: '250.00' },
        { kind: 'INVOICE_DUE_DATE', value: '2026-12-15' },
        { kind: 'INVOICE_COMMUNICATION', value: '+++090/9337/55493+++' },
      ],
      extraInfoIdentifiers: [{ name: 'customerId', value: 'C001' }],
      templateData: {},
    },
  }),
);
const word = (workflowId: string, jobName: string, filename: string, channelIdentifiers: object[]) =>
  json({
    workflowId,
    jobName,
    filename,
    payload: {
      channelIdentifiers,
      extraInfoIdentifiers: [{ name: 'customerId', value: 'C001' }],
      templateData: { customerName: 'Jane Doe', invoiceNumber: '2026-0001', amount: '125.00' },
    },
  });
write(
  'payload-word/email.json',
  word('wf_payload_word_email', 'Welcome letter', 'welcome-letter.docx', [{ kind: 'EMAIL_ADDRESS', value: 'jane.doe@example.com' }]),
);
write(
  'payload-word/qerds.json',
  word('wf_payload_word_qerds', 'Registered notice', 'registered-notice.docx', [
    { kind: 'EMAIL_ADDRESS', value: 'legal@acme.example' },
    { kind: 'COMPANY_IDENTIFICATION_NUMBER', value: '0123456789' },
  ]),
);
write(
  'payload-word/ebox.json',
  word('wf_payload_word_ebox', 'Tax notice', 'tax-notice.docx', [
    { kind: 'NATIONAL_REGISTER_NUMBER', value: '85073003328', mustBeEncrypted: true },
  ]),
);
write(
  'payload-word/docportal.json',
  word('wf_payload_word_docportal', 'Invoice 2026-0001', 'invoice-2026-0001.docx', [
    { kind: 'DOCPORTAL_TOKEN_SET_VALUE1', value: 'C001' },
    { kind: 'DOCPORTAL_TOKEN_SET_VALUE2', value: '2026-0001' },
    { kind: 'EMAIL_ADDRESS', value: 'jane.doe@example.com' },
    { kind: 'INVOICE_REFERENCE', value: 'INV-2026-0001' },
    { kind: 'INVOICE_AMOUNT', value: '125.00' },
    { kind: 'INVOICE_DUE_DATE', value: '2026-12-15' },
    { kind: 'INVOICE_COMMUNICATION', value: '+++090/9337/55493+++' },
  ]),
);
write(
  'payload-word/print-fr.json',
  word('wf_payload_word_print_fr', 'Courrier 2026-0001', 'courrier-2026-0001.docx', [
    { kind: 'ADDRESS_FIRST_NAME', value: 'Marie' },
    { kind: 'ADDRESS_LAST_NAME', value: 'Dupont' },
    { kind: 'ADDRESS_STREET', value: 'Rue de Rivoli' },
    { kind: 'ADDRESS_STREET_NUMBER', value: '12' },
    { kind: 'ADDRESS_POSTAL_CODE', value: '75001' },
    { kind: 'ADDRESS_CITY', value: 'Paris' },
    { kind: 'ADDRESS_COUNTRY_CODE', value: 'fr' },
  ]),
);
console.log('samples written');
