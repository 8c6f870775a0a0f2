import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type InspectLimits, inspectFile } from '../../../src/pipeline/inspect/inspect-file.js';
import { DEFAULT_ZIP_LIMITS } from '../../../src/pipeline/inspect/zip.js';
import {
  encryptedPdf,
  makeZip,
  validPdf,
  type ZipEntrySpec,
  zerosEntry,
} from '../../fixtures/inputs/hostile.js';

let dir: string;
let pdf: Buffer;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-zip-'));
  pdf = await validPdf();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function inspectZip(
  specs: ZipEntrySpec[] | Buffer,
  source = 'PDF',
  limits: Partial<InspectLimits> = {},
  fileName = 'batch.zip',
) {
  const p = path.join(dir, `${++n}.zip`);
  writeFileSync(p, Buffer.isBuffer(specs) ? specs : makeZip(specs));
  return inspectFile({ path: p, fileName, inputSourceType: source, maxBytes: 1024 * 1024 * 1024, limits });
}

describe('ZIP inspection accepts', () => {
  it('PDFs in folders, skipping directory entries, listing each PDF', async () => {
    const res = await inspectZip([
      { name: 'march/', method: 'store' },
      { name: 'march/a.pdf', data: pdf },
      { name: 'b.pdf', data: pdf, method: 'store' },
    ]);
    expect(res).toMatchObject({ ok: true, kind: 'zip', details: { entries: ['march/a.pdf', 'b.pdf'] } });
  });

  it('a payload-pdf batch of PDFs and index.csv', async () => {
    const res = await inspectZip(
      [
        { name: 'index.csv', data: 'file;EMAIL_ADDRESS\r\na.pdf;jane@example.com\r\n' },
        { name: 'a.pdf', data: pdf },
      ],
      'PAYLOAD_PDF',
    );
    expect(res).toMatchObject({ ok: true, details: { entries: ['index.csv', 'a.pdf'] } });
  });
});

describe('ZIP entries above the entry check size', () => {
  const small = { zip: { ...DEFAULT_ZIP_LIMITS, entryCheckMaxBytes: 100 } };

  it('are checked by their first bytes: a PDF passes', async () => {
    expect(await inspectZip([{ name: 'a.pdf', data: pdf }], 'PDF', small)).toMatchObject({ ok: true });
  });

  it('are checked by their first bytes: text named .pdf is refused', async () => {
    const res = await inspectZip([{ name: 'a.pdf', data: 'not a pdf '.repeat(50) }], 'PDF', small);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_ENTRY_TYPE',
      reason: 'In "batch.zip": "a.pdf" is not a PDF.',
      details: { entry: 'a.pdf' },
    });
  });
});

describe('ZIP inspection refuses', () => {
  it.each([
    [
      'a zip-slip name',
      [{ name: '../../etc/evil.pdf', data: 'x' }],
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      '../../etc/evil.pdf',
    ],
    [
      'an absolute name',
      [{ name: '/etc/evil.pdf', data: 'x' }],
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      '/etc/evil.pdf',
    ],
    [
      'a drive-letter name',
      [{ name: 'C:/evil.pdf', data: 'x' }],
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      'C:/evil.pdf',
    ],
    [
      'a backslash name',
      [{ name: '..\\evil.pdf', data: 'x' }],
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      '..\\evil.pdf',
    ],
  ])('%s', async (_what, specs, code, entry) => {
    const res = await inspectZip(specs);
    expect(res).toMatchObject({ ok: false, code, details: { entry } });
    expect(!res.ok && res.reason).toBe(
      `"batch.zip" has an entry with an unsafe name ${JSON.stringify(entry)} (absolute, climbing out with "..", or with a backslash); such an archive could write outside its folder.`,
    );
  });

  it('a symbolic link entry', async () => {
    const res = await inspectZip([
      { name: 'link.pdf', data: '/etc/passwd', method: 'store', unixMode: 0o120777 },
    ]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_SYMLINK',
      reason: '"batch.zip" entry "link.pdf" is a symbolic link; links in archives are refused.',
    });
  });

  it('an encrypted entry', async () => {
    const res = await inspectZip([{ name: 'a.pdf', data: pdf, encryptedFlag: true }]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_ENCRYPTED',
      reason: '"batch.zip" entry "a.pdf" is encrypted; send archives without a password.',
    });
  });

  it('a nested archive by its extension', async () => {
    const inner = makeZip([{ name: 'a.pdf', data: pdf }]);
    const res = await inspectZip([{ name: 'more.zip', data: inner }]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_NESTED',
      reason: '"batch.zip" entry "more.zip" is itself an archive; nested archives are refused.',
    });
  });

  it('a nested archive disguised as a PDF, by its content', async () => {
    const inner = makeZip([{ name: 'a.pdf', data: pdf }]);
    const res = await inspectZip([{ name: 'sneaky.pdf', data: inner }]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_NESTED',
      details: { entry: 'sneaky.pdf' },
    });
  });

  it('an entry that expands more than 100 times (zip bomb)', async () => {
    const res = await inspectZip([zerosEntry('bomb.pdf', 20)]);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BOMB', details: { entry: 'bomb.pdf' } });
    expect(!res.ok && res.reason).toMatch(
      /^"batch\.zip" entry "bomb\.pdf" expands \d+ times \(20 MiB\); more than 100 times is refused as a zip bomb\.$/,
    );
  });

  it('entries whose total expands beyond the limit', async () => {
    const res = await inspectZip(
      [
        { name: 'a.pdf', data: pdf },
        { name: 'b.pdf', data: pdf },
      ],
      'PDF',
      { zip: { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: pdf.length + 10 } },
    );
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BOMB' });
    expect(!res.ok && res.reason).toMatch(
      /^"batch\.zip" expands to more than .+ MiB; refused as a zip bomb\.$/,
    );
  });

  it('an entry whose data is larger than its header declares', async () => {
    const res = await inspectZip([{ name: 'a.pdf', data: pdf, declaredSize: 100 }]);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_CORRUPT' });
  });

  it('more entries than allowed', async () => {
    const specs = ['a', 'b', 'c'].map((x) => ({ name: `${x}.pdf`, data: pdf }));
    const res = await inspectZip(specs, 'PDF', { zip: { ...DEFAULT_ZIP_LIMITS, maxEntries: 2 } });
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES',
      reason: '"batch.zip" has more than 2 entries.',
    });
  });

  it('entries of the wrong type for the workflow', async () => {
    const res = await inspectZip([
      { name: 'a.pdf', data: pdf },
      { name: 'readme.txt', data: 'hello' },
    ]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_ENTRY_TYPE',
      reason: '"batch.zip" holds entries that are not PDF files: "readme.txt".',
    });
  });

  it('PDFs in a ZIP for a UBL workflow', async () => {
    const res = await inspectZip([{ name: 'a.pdf', data: pdf }], 'UBL');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_ENTRY_TYPE', reason: /not XML files/ });
  });

  it('an archive with no files', async () => {
    expect(await inspectZip([{ name: 'empty/', method: 'store' }])).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_EMPTY',
      reason: '"batch.zip" holds no PDF files.',
    });
  });

  it('an encrypted PDF inside, naming the entry', async () => {
    const res = await inspectZip([
      { name: 'a.pdf', data: pdf },
      { name: 'locked.pdf', data: encryptedPdf() },
    ]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_PDF_ENCRYPTED',
      details: { entry: 'locked.pdf' },
    });
    expect(!res.ok && res.reason).toMatch(
      /^In "batch\.zip": "locked\.pdf" is an encrypted or password-protected PDF/,
    );
  });

  it('an XML that is not UBL inside a UBL ZIP', async () => {
    const res = await inspectZip([{ name: 'c.xml', data: '<customers><c/></customers>' }], 'UBL');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_NOT_UBL', details: { entry: 'c.xml' } });
  });

  it('a truncated archive', async () => {
    const whole = makeZip([{ name: 'a.pdf', data: pdf }]);
    const res = await inspectZip(whole.subarray(0, whole.length - 30));
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_CORRUPT' });
    expect(!res.ok && res.reason).toMatch(/^"batch\.zip" is not a readable ZIP: .+\.$/);
  });
});
