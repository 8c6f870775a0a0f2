import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InspectOptions, inspectFile } from '../../../src/pipeline/inspect/inspect-file.js';
import {
  BILLION_LAUGHS,
  EXTERNAL_ENTITY,
  encryptedPdf,
  garbagePdf,
  makeZip,
  noPagePdf,
  sparsePdfEnds,
  truncatedPdf,
  validPdf,
} from '../../fixtures/inputs/hostile.js';

const SAMPLES = fileURLToPath(new URL('../../../samples/', import.meta.url));
// The Peppol BIS examples of shared/data, as the sandbox ships them (identical copies).
const PEPPOL = fileURLToPath(new URL('../../../src/sandbox/seed-data/peppol/', import.meta.url));
const MAX = 100 * 1024 * 1024;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-inspect-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function put(name: string, data: Buffer | string): string {
  const p = path.join(dir, `${Math.random().toString(36).slice(2)}-${name.replace(/[\n/]/g, '_')}`);
  writeFileSync(p, data);
  return p;
}

async function inspect(
  name: string,
  data: Buffer | string,
  inputSourceType: string,
  extra: Partial<InspectOptions> = {},
) {
  return inspectFile({ path: put(name, data), fileName: name, inputSourceType, maxBytes: MAX, ...extra });
}

describe('inspectFile accepts', () => {
  it.each([
    ['PDF', 'pdf-email/invoice-2026-0001.pdf', 'pdf'],
    ['PDF', 'pdf-email/invoices-2026-batch.zip', 'zip'],
    ['PDF', 'pdf-print/letter-2026-0001.pdf', 'pdf'],
    ['PDF', 'pdf-registered/notice-2026-0001.pdf', 'pdf'],
    ['PDF', 'managed-pdf-email/statement-2026-11.pdf', 'pdf'],
    ['DATA_FILE', 'data-file/customers.csv', 'csv'],
    ['DATA_FILE', 'data-file/customers.xml', 'xml'],
    ['UBL', 'ubl/invoice-base-example.xml', 'xml'],
    ['PAYLOAD_PDF', 'payload-pdf-print/letter-with-payment.pdf', 'pdf'],
    ['PAYLOAD_PDF', 'payload-pdf-print/letter-with-payment.json', 'json'],
    ['PAYLOAD_WORD', 'payload-word/email.json', 'json'],
    ['PAYLOAD_WORD', 'payload-word/print-fr.json', 'json'],
  ])('for a %s workflow the sample %s as %s', async (source, rel, kind) => {
    const res = await inspectFile({
      path: path.join(SAMPLES, rel),
      fileName: path.basename(rel),
      inputSourceType: source,
      maxBytes: MAX,
    });
    expect(res).toMatchObject({ ok: true, kind });
  });

  it('the sample batch ZIP with its three PDFs listed', async () => {
    const res = await inspectFile({
      path: path.join(SAMPLES, 'pdf-email/invoices-2026-batch.zip'),
      fileName: 'invoices-2026-batch.zip',
      inputSourceType: 'PDF',
      maxBytes: MAX,
    });
    expect(res.ok && (res.details['entries'] as string[]).length).toBe(3);
  });

  it('the sample data CSV with its ";" delimiter and three rows', async () => {
    const res = await inspectFile({
      path: path.join(SAMPLES, 'data-file/customers.csv'),
      fileName: 'customers.csv',
      inputSourceType: 'DATA_FILE',
      maxBytes: MAX,
    });
    expect(res).toMatchObject({ ok: true, details: { delimiter: ';', rows: 3 } });
  });

  const peppol = readdirSync(PEPPOL).filter((f) => f.endsWith('.xml'));
  it('all 11 Peppol BIS examples for a UBL workflow, with their UBL summary', async () => {
    expect(peppol).toHaveLength(11);
    for (const f of peppol) {
      const res = await inspectFile({
        path: path.join(PEPPOL, f),
        fileName: f,
        inputSourceType: 'UBL',
        maxBytes: MAX,
      });
      expect(res, f).toMatchObject({
        ok: true,
        kind: 'xml',
        details: { ubl: { senderId: expect.any(String) } },
      });
    }
  });

  it('a ZIP of the Peppol examples for a UBL workflow', async () => {
    const { readFileSync } = await import('node:fs');
    const zip = makeZip(peppol.map((f) => ({ name: `docs/${f}`, data: readFileSync(path.join(PEPPOL, f)) })));
    const res = await inspect('peppol.zip', zip, 'UBL');
    expect(res).toMatchObject({ ok: true, kind: 'zip' });
    expect(res.ok && (res.details['entries'] as string[]).length).toBe(11);
  });

  it('a PDF with several pages, reporting the page count', async () => {
    expect(await inspect('three.pdf', await validPdf(3), 'PDF')).toMatchObject({
      ok: true,
      kind: 'pdf',
      details: { pages: 3, parsed: true },
    });
  });

  it('names with spaces and unicode', async () => {
    expect(await inspect('Facture été 2026 №1.pdf', await validPdf(), 'PDF')).toMatchObject({ ok: true });
  });

  it('an upper-case extension', async () => {
    expect(await inspect('SCAN.PDF', await validPdf(), 'PDF')).toMatchObject({ ok: true, kind: 'pdf' });
  });

  it('a PDF above the parse limit by its two ends only', async () => {
    const res = await inspect('big.pdf', await validPdf(), 'PDF', { limits: { pdfParseMaxBytes: 100 } });
    expect(res).toMatchObject({ ok: true, details: { parsed: false } });
  });
});

describe('inspectFile refuses', () => {
  it.each([
    [
      'a zero-byte file',
      'empty.pdf',
      () => Buffer.alloc(0),
      'PDF',
      'DOCEX_INPUT_EMPTY',
      '"empty.pdf" is empty (0 bytes).',
    ],
    [
      'a corrupt PDF',
      'corrupt.pdf',
      garbagePdf,
      'PDF',
      'DOCEX_INPUT_PDF_CORRUPT',
      /^"corrupt\.pdf" (is not a readable PDF|has no readable page tree): .+\.$/,
    ],
    [
      'an encrypted PDF',
      'secret.pdf',
      encryptedPdf,
      'PDF',
      'DOCEX_INPUT_PDF_ENCRYPTED',
      '"secret.pdf" is an encrypted or password-protected PDF; the service cannot process it. Export it without a password.',
    ],
    [
      'a PDF without pages',
      'blank.pdf',
      noPagePdf,
      'PDF',
      'DOCEX_INPUT_PDF_EMPTY',
      '"blank.pdf" is a PDF with no pages.',
    ],
    [
      'a truncated PDF',
      'cut.pdf',
      async () => truncatedPdf(await validPdf(2)),
      'PDF',
      'DOCEX_INPUT_PDF_TRUNCATED',
      '"cut.pdf" has no %%EOF marker at its end: the PDF is truncated or was still being written.',
    ],
    [
      'a ZIP named .pdf',
      'fake.pdf',
      () => makeZip([{ name: 'a.pdf', data: 'x' }]),
      'PDF',
      'DOCEX_INPUT_TYPE_MISMATCH',
      '"fake.pdf" is named .pdf but its content is a ZIP archive.',
    ],
    [
      'an HTML page named .csv',
      'export.csv',
      () => '<html><body>Proxy error</body></html>',
      'DATA_FILE',
      'DOCEX_INPUT_TYPE_MISMATCH',
      '"export.csv" is named .csv but its content is XML (or HTML).',
    ],
    [
      'binary data named .pdf',
      'photo.pdf',
      () => Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
      'PDF',
      'DOCEX_INPUT_UNKNOWN_TYPE',
      '"photo.pdf" is named .pdf but its content is binary data of an unknown type.',
    ],
    [
      'a CSV for a PDF workflow',
      'rows.csv',
      () => 'a;b\n1;2\n',
      'PDF',
      'DOCEX_INPUT_WRONG_FOR_WORKFLOW',
      '"rows.csv" is not a file the workflow\'s PDF input source takes (.pdf, .zip).',
    ],
    [
      'a ZIP for a DATA_FILE workflow',
      'rows.zip',
      () => makeZip([{ name: 'a.csv', data: 'a\n1\n' }]),
      'DATA_FILE',
      'DOCEX_INPUT_WRONG_FOR_WORKFLOW',
      '"rows.zip" is not a file the workflow\'s DATA_FILE input source takes (.csv, .xml).',
    ],
    [
      'a billion-laughs XML',
      'lol.xml',
      () => BILLION_LAUGHS,
      'DATA_FILE',
      'DOCEX_INPUT_XML_DTD',
      '"lol.xml" contains a DOCTYPE or ENTITY declaration, which is refused for safety (entity expansion, external entities); export the XML without a DTD.',
    ],
    [
      'an external-entity XML',
      'xxe.xml',
      () => EXTERNAL_ENTITY,
      'UBL',
      'DOCEX_INPUT_XML_DTD',
      /DOCTYPE or ENTITY/,
    ],
    [
      'malformed XML',
      'broken.xml',
      () => '<customers>\n<customer><name>Jane</customer>\n</customers>',
      'DATA_FILE',
      'DOCEX_INPUT_XML_MALFORMED',
      /^"broken\.xml" is not well-formed XML: .+ \(line 2\)\.$/,
    ],
    [
      'XML nested deeper than the parser allows',
      'deep.xml',
      () => `<r>${'<a>'.repeat(150)}x${'</a>'.repeat(150)}</r>`,
      'DATA_FILE',
      'DOCEX_INPUT_XML_MALFORMED',
      '"deep.xml" could not be parsed as XML: Maximum nested tags exceeded.',
    ],
    [
      'an XML root without records',
      'none.xml',
      () => '<?xml version="1.0"?><customers></customers>',
      'DATA_FILE',
      'DOCEX_INPUT_NO_RECORDS',
      '"none.xml" has a root <customers> but no records.',
    ],
    [
      'XML that is not UBL for a UBL workflow',
      'customers.xml',
      () => '<?xml version="1.0"?><customers><c/></customers>',
      'UBL',
      'DOCEX_INPUT_NOT_UBL',
      /^"customers\.xml" is not a usable UBL document: not a UBL document: root <customers> is not in a UBL namespace\.$/,
    ],
    [
      'a CSV with ragged rows',
      'ragged.csv',
      () => 'a;b;c\r\n1;2;3\r\n4;5\r\n',
      'DATA_FILE',
      'DOCEX_INPUT_CSV_RAGGED',
      /row 3\.$/,
    ],
    [
      'a Latin-1 CSV',
      'latin.csv',
      () => Buffer.from('name;city\nJos;Li\u00e8ge\n', 'latin1'),
      'DATA_FILE',
      'DOCEX_INPUT_ENCODING',
      /line 2/,
    ],
    [
      'broken JSON',
      'req.json',
      () => '{"workflowId": ',
      'PAYLOAD_WORD',
      'DOCEX_INPUT_JSON_MALFORMED',
      /^"req\.json" is not valid JSON: .+\.$/,
    ],
    [
      'a JSON array of strings',
      'req.json',
      () => '["a"]',
      'PAYLOAD_WORD',
      'DOCEX_INPUT_JSON_MALFORMED',
      '"req.json" must hold a JSON object or an array of objects.',
    ],
    [
      'a name with a newline',
      'evil\nname.pdf',
      validPdf,
      'PDF',
      'DOCEX_INPUT_BAD_NAME',
      'The file name "evil\\nname.pdf" contains control or invisible formatting characters; rename the file.',
    ],
    [
      'a name with a right-to-left override (shows as "invoicefdp.exe" reversed)',
      'invoice\u202Efdp.exe.pdf',
      validPdf,
      'PDF',
      'DOCEX_INPUT_BAD_NAME',
      'The file name "invoice\\u202efdp.exe.pdf" contains control or invisible formatting characters; rename the file.',
    ],
    [
      'a name with a line separator',
      'two\u2028lines.pdf',
      validPdf,
      'PDF',
      'DOCEX_INPUT_BAD_NAME',
      /^The file name /,
    ],
    [
      'a name with a zero-width space',
      'in\u200Bvoice.pdf',
      validPdf,
      'PDF',
      'DOCEX_INPUT_BAD_NAME',
      /^The file name /,
    ],
    [
      'a name with a C1 control',
      'in\u0085voice.pdf',
      validPdf,
      'PDF',
      'DOCEX_INPUT_BAD_NAME',
      /^The file name /,
    ],
    [
      'a payload-pdf ZIP without index.csv',
      'batch.zip',
      async () => makeZip([{ name: 'a.pdf', data: await validPdf() }]),
      'PAYLOAD_PDF',
      'DOCEX_INPUT_BATCH_INDEX',
      '"batch.zip" is a payload-pdf batch without an index.csv naming each PDF\'s identifiers.',
    ],
  ])('%s', async (_what, name, make, source, code, reason) => {
    const res = await inspect(name, await make(), source);
    expect(res).toMatchObject({ ok: false, code });
    if (res.ok) return;
    if (typeof reason === 'string') expect(res.reason).toBe(reason);
    else expect(res.reason).toMatch(reason);
  });

  it('a file over the size limit, before reading it', async () => {
    const res = await inspect('big.pdf', await validPdf(), 'PDF', { maxBytes: 100 });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_TOO_LARGE', details: { limit: 100 } });
    expect(!res.ok && res.reason).toMatch(/^"big\.pdf" is .+ MiB, over the limit of .+ MiB\.$/);
  });

  it('a text file over the text check limit', async () => {
    const res = await inspect('rows.csv', 'a;b\n1;2\n', 'DATA_FILE', { limits: { textMaxBytes: 4 } });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_TOO_LARGE' });
  });

  it('an encrypted PDF above the parse limit, by its trailer', async () => {
    const res = await inspect('secret.pdf', encryptedPdf(), 'PDF', { limits: { pdfParseMaxBytes: 10 } });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_ENCRYPTED' });
  });

  it('a symbolic link, even to a good PDF', async () => {
    const target = put('real.pdf', await validPdf());
    const link = path.join(dir, 'link.pdf');
    symlinkSync(target, link);
    const res = await inspectFile({
      path: link,
      fileName: 'link.pdf',
      inputSourceType: 'PDF',
      maxBytes: MAX,
    });
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_SYMLINK',
      reason: '"link.pdf" is a symbolic link; drop the file itself, not a link to it.',
    });
  });

  it('a directory', async () => {
    const sub = path.join(dir, 'folder.pdf');
    mkdirSync(sub);
    expect(
      await inspectFile({ path: sub, fileName: 'folder.pdf', inputSourceType: 'PDF', maxBytes: MAX }),
    ).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_NOT_A_FILE',
    });
  });

  it('a file that vanished', async () => {
    const res = await inspectFile({
      path: path.join(dir, 'gone.pdf'),
      fileName: 'gone.pdf',
      inputSourceType: 'PDF',
      maxBytes: MAX,
    });
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_UNREADABLE',
      reason: '"gone.pdf" could not be read: ENOENT.',
    });
  });

  it('a file for an input source that takes no files', async () => {
    expect(await inspect('a.pdf', await validPdf(), 'SCHEDULED')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_WRONG_FOR_WORKFLOW',
    });
  });
});

describe('memory policy', () => {
  /** A sparse file (it costs no disk) of `size` bytes: `head` at 0, `tail` at its end. */
  async function sparse(name: string, size: number, head: Buffer, tail: Buffer): Promise<string> {
    const p = path.join(dir, name);
    const handle = await open(p, 'w');
    await handle.write(head, 0, head.length, 0);
    await handle.write(tail, 0, tail.length, size - tail.length);
    await handle.close();
    return p;
  }
  const inspectLarge = (p: string, size: number) =>
    inspectFile({ path: p, fileName: path.basename(p), inputSourceType: 'PDF', maxBytes: 2 * size });

  it('checks a 1 GiB PDF by its ends and structure without reading it into memory', async () => {
    const size = 1024 * 1024 * 1024;
    const { head, tail } = sparsePdfEnds(size);
    const p = await sparse('huge.pdf', size, head, tail);
    const before = process.memoryUsage().rss;
    const res = await inspectLarge(p, size);
    const grown = process.memoryUsage().rss - before;
    expect(res).toMatchObject({ ok: true, kind: 'pdf', size, details: { parsed: false } });
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  });

  it('refuses a 17 MB file of %PDF-, noise and %%EOF, and one whose trailer escapes /Encrypt', async () => {
    const size = 17 * 1000 * 1000;
    const noise = await sparse('noise.pdf', size, Buffer.from('%PDF-1.7\n'), Buffer.from('\n%%EOF\n'));
    expect(await inspectLarge(noise, size)).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_CORRUPT' });
    const { head, tail } = sparsePdfEnds(size, '/Encr#79pt 1 0 R ');
    const locked = await sparse('locked.pdf', size, head, tail);
    expect(await inspectLarge(locked, size)).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_ENCRYPTED' });
  });
});

describe('inspectFile from bytes read at the claim', () => {
  it.each([
    ['invoice.pdf', 'PDF', () => validPdf(2)],
    ['secret.pdf', 'PDF', async () => encryptedPdf()],
    ['cut.pdf', 'PDF', async () => truncatedPdf(await validPdf(1))],
    ['empty.pdf', 'PDF', async () => Buffer.alloc(0)],
    ['fake.pdf', 'PDF', async () => makeZip([{ name: 'a.pdf', data: 'x' }])],
    ['bomb.xml', 'UBL', async () => Buffer.from(BILLION_LAUGHS)],
    ['rows.csv', 'DATA_FILE', async () => Buffer.from('\ufeffa;b\r\n1;2\r\n')],
  ])('gives %s (%s) the same verdict as reading the file', async (name, source, make) => {
    const data = await make();
    const fromFile = await inspect(name, data, source);
    const fromBytes = await inspect(name, data, source, { bytes: data });
    expect(fromBytes).toEqual(fromFile);
  });
});
