import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectFile } from '../../../src/pipeline/inspect/inspect-file.js';
import { makeZip, validPdf, type ZipEntrySpec } from '../../fixtures/inputs/hostile.js';

let dir: string;
let pdf: Buffer;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-zip-names-'));
  pdf = await validPdf();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function inspectZip(specs: ZipEntrySpec[], source = 'PDF') {
  const p = path.join(dir, `${++n}.zip`);
  writeFileSync(p, makeZip(specs));
  return inspectFile({ path: p, fileName: 'batch.zip', inputSourceType: source, maxBytes: 1 << 30 });
}

/** The same PDF dropped under `fileName` (stored under a plain path: only the name is judged). */
async function inspectDropped(fileName: string) {
  const p = path.join(dir, `${++n}.pdf`);
  writeFileSync(p, pdf);
  return inspectFile({ path: p, fileName, inputSourceType: 'PDF', maxBytes: 1 << 30 });
}

describe('a ZIP entry name gets the verdict the same name gets when dropped', () => {
  it.each([
    ['a newline', 'two\nlines.pdf'],
    ['a tab', 'tab\there.pdf'],
    ['a NUL', 'nul\u0000.pdf'],
    ['a right-to-left override', 'invoice\u202Efdp.exe.pdf'],
    ['a right-to-left isolate', 'invoice\u2067fdp.exe.pdf'],
    ['a zero-width space', 'in\u200Bvoice.pdf'],
    ['a zero-width non-joiner', 'in\u200Cvoice.pdf'],
    ['a byte order mark', '\uFEFFinvoice.pdf'],
    ['a soft hyphen', 'in\u00ADvoice.pdf'],
    ['a C1 control', 'in\u0085voice.pdf'],
    ['a line separator', 'two\u2028lines.pdf'],
    ['a paragraph separator', 'two\u2029lines.pdf'],
    ['256 bytes', `${'x'.repeat(252)}.pdf`],
    ['255 bytes', `${'x'.repeat(251)}.pdf`],
    ['spaces', 'invoice 2026 0001 final.pdf'],
    ['NFD accents', 're\u00e7u-\u00e9t\u00e9.pdf'.normalize('NFD')],
    ['CJK and an emoji', '\u8acb\u6c42\u66f8-\u{1f9fe}.pdf'],
    ['a leading dash', '-rf invoice.pdf'],
    ['a Windows device name', 'CON.pdf'],
    ['a trailing space before the extension', 'invoice .pdf'],
  ])('a name with %s', async (_what, name) => {
    const dropped = await inspectDropped(name);
    const inZip = await inspectZip([{ name, data: pdf }]);
    expect(inZip.ok).toBe(dropped.ok);
    if (!dropped.ok && !inZip.ok) {
      expect(dropped.code).toBe('DOCEX_INPUT_BAD_NAME');
      expect(inZip.code).toBe('DOCEX_INPUT_ZIP_BAD_NAME');
      expect(inZip.details?.fault).toBe(dropped.details?.fault);
    }
  });
});

describe('ZIP entry names', () => {
  it('shows a refused name escaped, as a dropped one is', async () => {
    const res = await inspectZip([{ name: 'invoice\u202Efdp.exe.pdf', data: pdf }]);
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      reason:
        '"batch.zip" entry "invoice\\u202efdp.exe.pdf": its name contains control or invisible formatting characters, as no dropped file\'s name may; rename the entry.',
      details: { entry: 'invoice\u202Efdp.exe.pdf', fault: 'control' },
    });
  });

  it('judges every folder of a path, and folder entries themselves', async () => {
    const inPath = await inspectZip([{ name: 'march\u200B/a.pdf', data: pdf }]);
    expect(inPath).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BAD_NAME' });
    expect(!inPath.ok && inPath.reason).toBe(
      '"batch.zip" entry "march\\u200b/a.pdf": its name "march\\u200b" contains control or invisible formatting characters, as no dropped file\'s name may; rename the entry.',
    );
    const folder = await inspectZip([
      { name: 'evil\n/', method: 'store' },
      { name: 'a.pdf', data: pdf },
    ]);
    expect(folder).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      details: { entry: 'evil\n/' },
    });
  });

  it('refuses empty and "." segments, which extract onto another name', async () => {
    expect(await inspectZip([{ name: 'a//b.pdf', data: pdf }])).toMatchObject({
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      details: { fault: 'empty' },
    });
    expect(await inspectZip([{ name: './b.pdf', data: pdf }])).toMatchObject({
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      details: { fault: 'dot' },
    });
  });

  it('refuses a name marked UTF-8 whose bytes are Latin-1, as a dropped Latin-1 name is', async () => {
    const res = await inspectZip([
      { name: 'facture.pdf', nameBytes: Buffer.from('facture-\u00e9.pdf', 'latin1'), data: pdf },
    ]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      details: { entry: 'facture-\ufffd.pdf', fault: 'not-utf8' },
    });
  });

  it('takes a CP437 name without the UTF-8 flag (as Windows writes it)', async () => {
    const res = await inspectZip([
      {
        name: 'f.pdf',
        nameBytes: Buffer.from([0x66, 0x82, 0x2e, 0x70, 0x64, 0x66]),
        utf8Flag: false,
        data: pdf,
      },
    ]);
    expect(res).toMatchObject({ ok: true, details: { entries: ['f\u00e9.pdf'] } });
  });

  it('refuses a newline byte that the CP437 reading would show as "◙"', async () => {
    const res = await inspectZip([
      { name: 'x.pdf', nameBytes: Buffer.from('two\nlines.pdf'), utf8Flag: false, data: pdf },
    ]);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BAD_NAME', details: { fault: 'control' } });
  });

  it('refuses a right-to-left override stored as UTF-8 bytes without the UTF-8 flag', async () => {
    const res = await inspectZip([
      { name: 'x.pdf', nameBytes: Buffer.from('invoice\u202Efdp.exe.pdf'), utf8Flag: false, data: pdf },
    ]);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BAD_NAME' });
    expect(!res.ok && res.reason).toContain('its name "invoice\\u202efdp.exe.pdf" contains control');
  });

  it('refuses a right-to-left override hidden in a Unicode path field', async () => {
    const res = await inspectZip([{ name: 'plain.pdf', unicodePath: 'invoice\u202Efdp.exe.pdf', data: pdf }]);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_BAD_NAME',
      details: { entry: 'invoice\u202Efdp.exe.pdf' },
    });
  });

  it('refuses a stored "../" name behind a safe Unicode path field', async () => {
    const res = await inspectZip([{ name: '../../evil.pdf', unicodePath: 'evil.pdf', data: pdf }]);
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      reason:
        '"batch.zip" entry "evil.pdf" is also stored as "../../evil.pdf", an unsafe name (absolute, climbing out with "..", or with a backslash) for programs that read it so; such an archive could write outside its folder.',
      details: { entry: 'evil.pdf' },
    });
  });
});

describe('ZIP entry types', () => {
  it.each([
    ['a FIFO', 0o010644, 'FIFO'],
    ['a character device', 0o020644, 'character device'],
    ['a block device', 0o060660, 'block device'],
    ['a socket', 0o140755, 'socket'],
    ['an unknown file type', 0o110644, 'unknown type'],
  ])('refuses %s by its Unix mode', async (_what, unixMode, type) => {
    const res = await inspectZip([{ name: 'dev.pdf', data: pdf, unixMode }]);
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_NOT_A_FILE',
      reason: `"batch.zip" entry "dev.pdf" is a ${type} by its Unix mode; only files and folders are taken from an archive.`,
      details: { entry: 'dev.pdf', type },
    });
  });

  it('refuses a folder recorded under a file name', async () => {
    const unix = await inspectZip([{ name: 'a.pdf', data: pdf, unixMode: 0o040755 }]);
    expect(unix).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_NOT_A_FILE',
      details: { type: 'folder' },
    });
    const dos = await inspectZip([{ name: 'a.pdf', data: pdf, dosAttributes: 0x10 }]);
    expect(dos).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_NOT_A_FILE' });
  });

  it('takes regular files and folders by their Unix modes', async () => {
    const res = await inspectZip([
      { name: 'm/', method: 'store', unixMode: 0o040755 },
      { name: 'm/a.pdf', data: pdf, unixMode: 0o100644 },
    ]);
    expect(res).toMatchObject({ ok: true, details: { entries: ['m/a.pdf'] } });
  });
});

describe('ZIP entries with one name', () => {
  it('refuses the same name twice with different content, naming both', async () => {
    const res = await inspectZip([
      { name: 'a.pdf', data: pdf },
      { name: 'a.pdf', data: await validPdf(2) },
    ]);
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_DUPLICATE',
      reason:
        '"batch.zip" entry "a.pdf" has the name of the earlier entry "a.pdf" (names that differ only in case or Unicode normalisation are one file once extracted); which one is meant cannot be told.',
      details: { entry: 'a.pdf', earlier: 'a.pdf' },
    });
  });

  it.each([
    ['differing in case', ['Invoice.pdf', 'INVOICE.PDF']],
    ['in NFC and NFD', ['re\u00e7u.pdf', 're\u00e7u.pdf'.normalize('NFD')]],
    ['a file and a folder', ['x.pdf/a.pdf', 'X.pdf']],
  ])('refuses names %s', async (_what, names) => {
    const res = await inspectZip(names.map((name) => ({ name, data: pdf })));
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_DUPLICATE',
      details: { earlier: names[0] },
    });
  });

  it('refuses a payload-pdf batch with two index.csv entries', async () => {
    const index = (email: string) => `file;EMAIL_ADDRESS\r\na.pdf;${email}\r\n`;
    const res = await inspectZip(
      [
        { name: 'index.csv', data: index('jane@example.com') },
        { name: 'a.pdf', data: pdf },
        { name: 'index.csv', data: index('mallory@example.com') },
      ],
      'PAYLOAD_PDF',
    );
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_ZIP_DUPLICATE',
      details: { entry: 'index.csv' },
    });
  });
});
