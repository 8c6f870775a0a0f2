import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { analyseUpload, type ContentItem, payloadItem, readUpload } from '../../src/sandbox/content/index.js';
import { makeZip, type ZipEntrySpec } from '../fixtures/inputs/hostile.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s1-content-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, data: string | Buffer): string {
  const p = path.join(dir, name);
  writeFileSync(p, data);
  return p;
}

async function zipOf(name: string, entries: Record<string, string | Buffer>): Promise<string> {
  const z = new yazl.ZipFile();
  for (const [entry, data] of Object.entries(entries)) z.addBuffer(Buffer.from(data), entry);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return file(name, Buffer.concat(chunks));
}

const samplePdf = readFileSync(new URL('../../samples/pdf-email/invoice-2026-0001.pdf', import.meta.url));
const ubl = readFileSync(new URL('../../samples/ubl/invoice-base-example.xml', import.meta.url));

describe('analyseUpload', () => {
  it('reads the recipient of a PDF from its Subject', async () => {
    const r = await analyseUpload({
      filePath: file('a.pdf', samplePdf),
      filename: 'a.pdf',
      inputSourceType: 'PDF',
    });
    expect(r).toMatchObject({ ok: true, items: [{ sourceRef: 'a.pdf', recipient: 'jane.doe@example.com' }] });
  });

  it('makes one item per CSV row with either delimiter, and a header-plus-row original', async () => {
    const semi = await analyseUpload({
      filePath: file('s.csv', 'name;email\nA;a@x.be\nB;b@x.be\n\n'),
      filename: 's.csv',
      inputSourceType: 'DATA_FILE',
    });
    const comma = await analyseUpload({
      filePath: file('c.csv', 'name,email\nA,a@x.be\n'),
      filename: 'c.csv',
      inputSourceType: 'DATA_FILE',
    });
    expect(semi.ok && semi.items.map((i) => i.recipient)).toEqual(['a@x.be', 'b@x.be']);
    expect(semi.ok && semi.items[1]?.original?.data.toString()).toBe('name;email\r\nB;b@x.be\r\n');
    expect(comma.ok && comma.items.length).toBe(1);
  });

  it('streams a CSV of many chunks row by row: every row once and in order, quoted line breaks and multi-byte text across chunk edges, a byte-order mark dropped', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) =>
      i % 7 === 0 ? `r${i}@x.be,"two\nlines ${i}, é€"` : `r${i}@x.be,plain ${i} é€`,
    );
    const data = `\uFEFFemail,note\n${rows.join('\n')}\n`;
    expect(Buffer.byteLength(data)).toBeGreaterThan(4 * 64 * 1024);
    const items: ContentItem[] = [];
    // A sink that makes the reader wait now and then, as a full spool file does.
    const read = await readUpload(
      { filePath: file('many.csv', data), filename: 'many.csv', inputSourceType: 'DATA_FILE' },
      (item) => {
        items.push(item);
        return items.length % 100 === 0 ? nextTurn() : undefined;
      },
    );
    expect(read).toEqual({ ok: true, count: 20_000 });
    expect(items.map((i) => i.recipient)).toEqual(rows.map((_, i) => `r${i}@x.be`));
    expect(items[19_999]?.sourceRef).toBe('many.csv#row=20000');
    expect(items[0]?.original?.data.toString()).toBe('email,note\r\nr0@x.be,"two\nlines 0, é€"\r\n');
    expect(items[1]?.original?.data.toString()).toBe('email,note\r\nr1@x.be,plain 1 é€\r\n');
  });

  it('makes one item per child element of the root of an XML data file', async () => {
    const xml =
      '<?xml version="1.0"?><rows><row><mail>a@x.be</mail></row><!-- c --><row><mail>fail@x.be</mail></row></rows>';
    const r = await analyseUpload({
      filePath: file('d.xml', xml),
      filename: 'd.xml',
      inputSourceType: 'DATA_FILE',
    });
    expect(r.ok && r.items.map((i) => i.recipient)).toEqual(['a@x.be', 'fail@x.be']);
    expect(r.ok && r.items[0]?.original?.data.toString()).toContain('<row><mail>a@x.be</mail></row>');
  });

  it('makes one item per UBL document, in a ZIP one per XML entry, with the Peppol receiver as recipient', async () => {
    const single = await analyseUpload({
      filePath: file('u.xml', ubl),
      filename: 'u.xml',
      inputSourceType: 'UBL',
    });
    expect(single).toMatchObject({ ok: true, items: [{ sourceRef: 'u.xml' }] });
    expect(single.ok && single.items[0]?.recipient).toMatch(/^\d{4}:/);
    const zipped = await analyseUpload({
      filePath: await zipOf('u.zip', { 'a.xml': ubl, 'b/b.xml': ubl, 'readme.txt': 'x' }),
      filename: 'u.zip',
      inputSourceType: 'UBL',
    });
    expect(zipped.ok && zipped.items.map((i) => i.sourceRef)).toEqual(['a.xml', 'b/b.xml']);
  });

  it('fails unreadable input: a non-PDF, malformed XML, a non-UBL root, a ZIP without PDFs, a corrupt ZIP', async () => {
    const cases = [
      { name: 'x.pdf', data: 'plain text', type: 'PDF' },
      { name: 'x.xml', data: '<a><b></a>', type: 'DATA_FILE' },
      { name: 'o.xml', data: '<Order><ID>1</ID></Order>', type: 'UBL' },
      { name: 'bad.zip', data: 'PK not really', type: 'PDF' },
    ];
    for (const c of cases) {
      const r = await analyseUpload({
        filePath: file(c.name, c.data),
        filename: c.name,
        inputSourceType: c.type,
      });
      expect(r.ok, c.name).toBe(false);
    }
    const empty = await analyseUpload({
      filePath: await zipOf('e.zip', { 'readme.txt': 'x' }),
      filename: 'e.zip',
      inputSourceType: 'PDF',
    });
    expect(empty).toMatchObject({ ok: false, code: 'NO_DOCUMENTS' });
  });

  it('refuses a ZIP whose entries the agent would refuse: a hidden name, a FIFO, one name twice', async () => {
    const cases: [string, ZipEntrySpec[], RegExp][] = [
      [
        'rlo.zip',
        [{ name: 'invoice\u202Efdp.exe.pdf', data: samplePdf }],
        /^entry "invoice\\u202efdp\.exe\.pdf": the name /,
      ],
      [
        'fifo.zip',
        [{ name: 'pipe.pdf', data: samplePdf, unixMode: 0o010644 }],
        /is not a regular file or folder$/,
      ],
      [
        'twice.zip',
        [
          { name: 'a.pdf', data: samplePdf },
          { name: 'A.PDF', data: samplePdf },
        ],
        /has the name of an earlier entry$/,
      ],
    ];
    for (const [name, specs, message] of cases) {
      const r = await analyseUpload({
        filePath: file(name, makeZip(specs)),
        filename: name,
        inputSourceType: 'PDF',
      });
      expect(r, name).toMatchObject({ ok: false, code: 'UNSAFE_ENTRY', message });
    }
  });

  it('takes the e-mail address of a payload as its recipient', () => {
    const item = payloadItem(
      {
        channelIdentifiers: [
          { kind: 'FIRST_NAME', value: 'A' },
          { kind: 'EMAIL_ADDRESS', value: 'a@x.be' },
        ],
        extraInfoIdentifiers: [],
      },
      'f.docx',
    );
    expect(item.recipient).toBe('a@x.be');
  });
});
