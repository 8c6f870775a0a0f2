import { describe, expect, it } from 'vitest';
import { INPUT_ERROR_CODES } from '../../../src/pipeline/inspect/codes.js';
import { inspectCsvBytes, parseCsv } from '../../../src/pipeline/inspect/csv.js';
import { detectType } from '../../../src/pipeline/inspect/detect-type.js';
import { decodeUtf8 } from '../../../src/pipeline/inspect/text.js';
import { makeZip, onePageHandPdf } from '../../fixtures/inputs/hostile.js';

describe('detectType', () => {
  it.each([
    ['a PDF by its %PDF- header', onePageHandPdf(), 'pdf'],
    [
      'a PDF with a few junk bytes before the header',
      Buffer.concat([Buffer.from('\r\n  '), onePageHandPdf()]),
      'pdf',
    ],
    ['a ZIP by its local header', makeZip([{ name: 'a.pdf', data: 'x' }]), 'zip'],
    ['an empty ZIP by its end record', makeZip([]), 'zip'],
    [
      'a ZIP storing a PDF uncompressed',
      makeZip([{ name: 'a.pdf', data: onePageHandPdf(), method: 'store' }]),
      'zip',
    ],
    ['XML with a declaration', Buffer.from('<?xml version="1.0"?><a/>'), 'xml'],
    ['XML after a BOM and whitespace', Buffer.from('\uFEFF\n  <customers/>'), 'xml'],
    ['an HTML error page as XML-like', Buffer.from('<html><body>502</body></html>'), 'xml'],
    ['a JSON object', Buffer.from(' {"a":1}'), 'json'],
    ['a JSON array', Buffer.from('[{"a":1}]'), 'json'],
    ['CSV text', Buffer.from('a;b\r\n1;2\r\n'), 'text'],
    ['UTF-16 text by its BOM', Buffer.from([0xff, 0xfe, 0x61, 0x00]), 'text'],
    ['binary data with NUL bytes', Buffer.from([0x00, 0x01, 0x02, 0x03, 0x89, 0x50]), 'unknown'],
    ['a PNG', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), 'unknown'],
    ['nothing', Buffer.alloc(0), 'unknown'],
  ])('recognises %s', (_what, head, type) => {
    expect(detectType(head)).toBe(type);
  });
});

describe('parseCsv', () => {
  it('detects ";" and handles a BOM and CRLF line ends', () => {
    const parsed = parseCsv('\uFEFFname;amount\r\nJane;125,00\r\nJohn;80,50\r\n', 'c.csv');
    expect(parsed).toMatchObject({
      ok: true,
      delimiter: ';',
      lineBreak: '\r\n',
      header: ['name', 'amount'],
      records: [
        { row: 2, cells: ['Jane', '125,00'] },
        { row: 3, cells: ['John', '80,50'] },
      ],
    });
  });

  it.each([
    [',', 'a,b\n1,2\n'],
    ['\t', 'a\tb\n1\t2\n'],
    ['|', 'a|b\n1|2\n'],
  ])('detects the delimiter %j', (delimiter, text) => {
    expect(parseCsv(text, 'c.csv')).toMatchObject({ ok: true, delimiter });
  });

  it('numbers rows as a spreadsheet does: blank lines and quoted line breaks count once each', () => {
    const parsed = parseCsv('a;b\n1;2\n\n"multi\nline";3\n4;5\n', 'c.csv');
    expect(parsed.ok && parsed.records.map((r) => r.row)).toEqual([2, 4, 5]);
  });

  it('reports ragged rows with their row numbers', () => {
    const parsed = parseCsv('a;b;c\r\n1;2;3\r\n4;5\r\n6;7;8;9\r\n', 'erp export.csv');
    expect(parsed).toMatchObject({ ok: false, code: 'DOCEX_INPUT_CSV_RAGGED', details: { rows: [3, 4] } });
    expect(!parsed.ok && parsed.reason).toBe(
      '"erp export.csv" has rows whose number of fields differs from the header\'s 3 (delimiter ";"): row 3, 4.',
    );
  });

  it('refuses an unterminated quote with its row', () => {
    const parsed = parseCsv('a,b\n1,"2\n', 'q.csv');
    expect(parsed).toMatchObject({ ok: false, code: 'DOCEX_INPUT_CSV_MALFORMED' });
    expect(!parsed.ok && parsed.reason).toMatch(
      /^"q\.csv" cannot be parsed as CSV: quoted field unterminated at row 2\.$/,
    );
  });
});

describe('inspectCsvBytes and decodeUtf8', () => {
  it('refuses invalid UTF-8 and names the line of the first bad byte', () => {
    const latin1 = Buffer.concat([
      Buffer.from('name;city\r\nJane;Paris\r\nJos;Li'),
      Buffer.from([0xe8]),
      Buffer.from('ge\r\n'),
    ]);
    const res = inspectCsvBytes(latin1, 'klanten.csv');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ENCODING', details: { line: 3 } });
    expect(!res.ok && res.reason).toBe(
      '"klanten.csv" is not valid UTF-8 (first bad byte on line 3); export it as UTF-8.',
    );
  });

  it('refuses UTF-16 in words', () => {
    const res = decodeUtf8(Buffer.from('\uFEFFa;b', 'utf16le'), 'u.csv');
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ENCODING',
      reason:
        '"u.csv" is UTF-16 (little-endian, with a byte order mark), not UTF-8; export it as UTF-8 (in Excel: "CSV UTF-8").',
      details: { encoding: 'UTF-16LE', bom: true },
    });
  });

  it('refuses a header without data rows', () => {
    expect(inspectCsvBytes(Buffer.from('a;b\r\n\r\n'), 'h.csv')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_NO_RECORDS',
      reason: '"h.csv" has a header but no data rows.',
    });
  });

  it('refuses an empty column name', () => {
    expect(inspectCsvBytes(Buffer.from('a;;c\r\n1;2;3\r\n'), 'e.csv')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_CSV_MALFORMED',
      details: { columns: [2] },
    });
  });

  it('describes an accepted CSV', () => {
    expect(inspectCsvBytes(Buffer.from('\uFEFFa;b\r\n1;2\r\n3;4\r\n'), 'ok.csv')).toEqual({
      ok: true,
      details: { delimiter: ';', lineBreak: '\r\n', columns: ['a', 'b'], rows: 2 },
    });
  });
});

describe('INPUT_ERROR_CODES', () => {
  it('lists every code with a one-line explanation for docs/errors.md', () => {
    for (const [code, text] of Object.entries(INPUT_ERROR_CODES)) {
      expect(code).toMatch(/^DOCEX_INPUT_[A-Z_]+$/);
      expect(text).not.toContain('\n');
      expect(text.length).toBeGreaterThan(10);
    }
  });
});
