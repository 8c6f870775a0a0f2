import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectType, detectWideText } from '../../../src/pipeline/inspect/detect-type.js';
import { type InspectLimits, inspectFile } from '../../../src/pipeline/inspect/inspect-file.js';
import { decodeUtf8 } from '../../../src/pipeline/inspect/text.js';
import { DEFAULT_ZIP_LIMITS } from '../../../src/pipeline/inspect/zip.js';
import { payloadPdfBatchFromIndexCsv } from '../../../src/pipeline/payload/csv-requests.js';
import { payloadPdfFromSidecar } from '../../../src/pipeline/payload/json-requests.js';
import { makeZip, validPdf, type WideEncoding, wideText } from '../../fixtures/inputs/hostile.js';

const ENCODINGS: WideEncoding[] = ['UTF-16LE', 'UTF-16BE', 'UTF-32LE', 'UTF-32BE'];
const BOTH = ENCODINGS.flatMap((e) => [
  [e, true],
  [e, false],
]) as [WideEncoding, boolean][];

/** "UTF-16 (little-endian, with a byte order mark)" */
const words = (encoding: WideEncoding, bom: boolean) =>
  `${encoding.slice(0, 6)} (${encoding.endsWith('LE') ? 'little' : 'big'}-endian, ${bom ? 'with' : 'without'} a byte order mark)`;

const CSV = 'customerId;name\r\nC001;Zo\u00eb\r\n';
const JSON_REQUEST =
  '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],"extraInfoIdentifiers":[],"templateData":{}}}';
const XML = '<?xml version="1.0"?>\n<customers><customer><name>Ann</name></customer></customers>\n';
const UBL =
  '<?xml version="1.0"?>\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>\n';

let dir: string;
let pdf: Buffer;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-wide-'));
  pdf = await validPdf();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function inspect(fileName: string, bytes: Buffer, source: string, limits: Partial<InspectLimits> = {}) {
  const p = path.join(dir, `${++n}-${fileName}`);
  writeFileSync(p, bytes);
  return inspectFile({ path: p, fileName, inputSourceType: source, maxBytes: 1 << 30, limits });
}

describe('detectWideText', () => {
  it.each(BOTH)('finds %s (BOM: %s)', (encoding, bom) => {
    expect(detectWideText(wideText('name;city\r\nJane;Paris\r\n', encoding, bom))).toEqual({ encoding, bom });
  });

  it.each([
    ['UTF-8 text', Buffer.from(CSV)],
    ['UTF-8 with its BOM', Buffer.from(`\ufeff${CSV}`)],
    ['one UTF-16 character (too short to tell)', Buffer.from('a', 'utf16le')],
    ['CJK in UTF-16LE (no NULs to see)', Buffer.from('\u8acb\u6c42\u66f8\u8acb\u6c42\u66f8', 'utf16le')],
    ['bytes with scattered NULs', Buffer.from([1, 0, 0, 5, 7, 7, 0, 9, 3, 3, 3, 3])],
  ])('finds nothing in %s', (_what, bytes) => {
    expect(detectWideText(bytes)).toBeUndefined();
  });

  it('lets detectType call BOM-less UTF-16 text, not unknown binary data', () => {
    expect(detectType(wideText(CSV, 'UTF-16LE', false))).toBe('text');
    expect(detectType(wideText(CSV, 'UTF-32BE', true))).toBe('text');
  });
});

describe('UTF-16 and UTF-32 get DOCEX_INPUT_ENCODING, naming the encoding, in every format', () => {
  const cases: [string, string, string, string][] = [
    ['a DATA_FILE CSV', 'customers.csv', CSV, 'DATA_FILE'],
    ['a DATA_FILE XML', 'customers.xml', XML, 'DATA_FILE'],
    ['a UBL document', 'invoice.xml', UBL, 'UBL'],
    ['a payload-word JSON request', 'request.json', JSON_REQUEST, 'PAYLOAD_WORD'],
    ['a payload-word CSV', 'mailing.csv', CSV, 'PAYLOAD_WORD'],
    ['a payload-word XML', 'letters.xml', XML, 'PAYLOAD_WORD'],
    ['a payload-pdf index file', 'index.csv', CSV, 'PAYLOAD_PDF'],
    ['a payload-pdf JSON index file', 'index.json', JSON_REQUEST, 'PAYLOAD_PDF'],
  ];
  it.each(
    cases.flatMap(([what, file, text, source]) =>
      BOTH.map(([encoding, bom]) => [what, encoding, bom, file, text, source] as const),
    ),
  )('%s in %s (BOM: %s)', async (_what, encoding, bom, file, text, source) => {
    const res = await inspect(file, wideText(text, encoding, bom), source);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ENCODING', details: { encoding, bom } });
    const hint = file.endsWith('.csv') ? ' (in Excel: "CSV UTF-8")' : '';
    expect(!res.ok && res.reason).toBe(
      `"${file}" is ${words(encoding, bom)}, not UTF-8; export it as UTF-8${hint}.`,
    );
  });

  it.each(BOTH)('a UBL ZIP entry in %s (BOM: %s), read whole or by its head', async (encoding, bom) => {
    const zip = makeZip([{ name: 'invoice.xml', data: wideText(UBL, encoding, bom) }]);
    const whole = await inspect('ubl.zip', zip, 'UBL');
    expect(whole).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ENCODING',
      details: { entry: 'invoice.xml' },
    });
    const head = await inspect('ubl.zip', zip, 'UBL', {
      zip: { ...DEFAULT_ZIP_LIMITS, entryCheckMaxBytes: 10 },
    });
    expect(head).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ENCODING', details: { encoding } });
  });

  it.each(BOTH)('the index.csv of a payload-pdf batch ZIP in %s (BOM: %s)', async (encoding, bom) => {
    const index = wideText('file;EMAIL_ADDRESS\r\na.pdf;jane@example.com\r\n', encoding, bom);
    const zip = makeZip([
      { name: 'index.csv', data: index },
      { name: 'a.pdf', data: pdf },
    ]);
    const res = await inspect('batch.zip', zip, 'PAYLOAD_PDF');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ENCODING', details: { entry: 'index.csv' } });
    expect(payloadPdfBatchFromIndexCsv(index, { workflowId: 'wf_x' })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ENCODING',
      details: { encoding, bom },
    });
  });

  it.each(BOTH)('the JSON sidecar of a payload-pdf PDF in %s (BOM: %s)', (encoding, bom) => {
    const res = payloadPdfFromSidecar('letter.pdf', wideText(JSON_REQUEST, encoding, bom), {
      workflowId: 'wf_x',
    });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ENCODING', details: { encoding, bom } });
    expect(!res.ok && res.reason).toBe(
      `"letter.json" is ${words(encoding, bom)}, not UTF-8; export it as UTF-8.`,
    );
  });

  it('decodeUtf8 refuses BOM-less UTF-16, which is valid UTF-8 byte for byte', () => {
    expect(decodeUtf8(wideText('a;b\r\n1;2\r\n', 'UTF-16LE', false), 'u.csv')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ENCODING',
    });
  });

  it('a UTF-16 file named .pdf is still refused for its type', async () => {
    const res = await inspect('scan.pdf', wideText(CSV, 'UTF-16LE', true), 'PDF');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_TYPE_MISMATCH' });
  });
});
