import { describe, expect, it } from 'vitest';
import {
  type ArchiveEntryRecord,
  ArchiveNames,
  archiveEntryFault,
  entryType,
  nameBytesAreUtf8,
  nameFault,
  sameNameKey,
} from '../../src/domain/file-names.js';

const UNIX = (3 << 8) | 20;
const DOS = 20;

function record(name: string, more: Partial<ArchiveEntryRecord> = {}): ArchiveEntryRecord {
  return {
    name,
    rawName: Buffer.from(name, 'utf8'),
    utf8Flag: true,
    versionMadeBy: DOS,
    externalFileAttributes: 0,
    ...more,
  };
}

describe('nameFault, the one rule for dropped names and archive entries', () => {
  it.each([
    ['a newline', 'two\nlines.pdf', 'control'],
    ['a tab', 'a\tb.pdf', 'control'],
    ['a NUL', 'a\u0000.pdf', 'control'],
    ['DEL', 'a\u007f.pdf', 'control'],
    ['a C1 control', 'in\u0085voice.pdf', 'control'],
    ['a right-to-left override', 'invoice\u202Efdp.exe.pdf', 'control'],
    ['a left-to-right isolate', 'a\u2066b.pdf', 'control'],
    ['a zero-width space', 'in\u200Bvoice.pdf', 'control'],
    ['a zero-width joiner', 'in\u200Dvoice.pdf', 'control'],
    ['a byte order mark inside', '\uFEFFinvoice.pdf', 'control'],
    ['a soft hyphen', 'in\u00ADvoice.pdf', 'control'],
    ['a line separator', 'two\u2028lines.pdf', 'control'],
    ['nothing', '', 'empty'],
    ['"."', '.', 'dot'],
    ['".."', '..', 'dot'],
    ['a slash', 'a/b.pdf', 'slash'],
    ['256 bytes', `${'x'.repeat(252)}.pdf`, 'too-long'],
    ['128 two-byte characters and .pdf (260 bytes)', `${'é'.repeat(128)}.pdf`, 'too-long'],
  ])('refuses a name with %s', (_what, name, fault) => {
    expect(nameFault(name)).toBe(fault);
  });

  it.each([
    ['spaces', 'invoice 2026 0001 final.pdf'],
    ['NFD accents', 're\u00e7u.pdf'.normalize('NFD')],
    ['CJK and an emoji', '\u8acb\u6c42\u66f8-\u{1f9fe}.pdf'],
    ['255 bytes', `${'x'.repeat(251)}.pdf`],
    ['quotes, a colon, a backslash', `we"ird 'quo:ted' back\\slash.pdf`],
    ['a trailing dot', 'invoice.pdf.'],
    ['a trailing space', 'invoice.pdf '],
    ['a Windows device name', 'CON.pdf'],
    ['a real U+FFFD', 'a\ufffd.pdf'],
  ])('takes a name with %s (as the file system would)', (_what, name) => {
    expect(nameFault(name)).toBeUndefined();
  });

  it('tells UTF-8 name bytes from Latin-1 ones, a real U+FFFD included', () => {
    expect(nameBytesAreUtf8(Buffer.from('facture-é.pdf', 'utf8'))).toBe(true);
    expect(nameBytesAreUtf8(Buffer.from('a\ufffd.pdf', 'utf8'))).toBe(true);
    expect(nameBytesAreUtf8(Buffer.from('facture-é.pdf', 'latin1'))).toBe(false);
  });

  it('compares names as a case-insensitive, normalising file system does', () => {
    expect(sameNameKey('Re\u00e7u.PDF')).toBe(sameNameKey('re\u00e7u.pdf'.normalize('NFD')));
    expect(sameNameKey('a.pdf')).not.toBe(sameNameKey('b.pdf'));
  });
});

describe('archiveEntryFault', () => {
  it('refuses each segment of a path by the name rule', () => {
    expect(archiveEntryFault(record('ok/in\u200Bvoice.pdf'))).toEqual({
      kind: 'name',
      fault: 'control',
      segment: 'in\u200Bvoice.pdf',
    });
    expect(archiveEntryFault(record('bad\u202E/a.pdf'))).toMatchObject({
      fault: 'control',
      segment: 'bad\u202E',
    });
    expect(archiveEntryFault(record('a//b.pdf'))).toMatchObject({ fault: 'empty' });
    expect(archiveEntryFault(record('./a.pdf'))).toMatchObject({ fault: 'dot' });
    expect(archiveEntryFault(record(`${'d'.repeat(300)}/a.pdf`))).toMatchObject({ fault: 'too-long' });
  });

  it('takes a folder entry by its trailing slash, and plain nested names', () => {
    expect(archiveEntryFault(record('march/'))).toBeUndefined();
    expect(archiveEntryFault(record('march/a.pdf'))).toBeUndefined();
  });

  it('refuses a name marked UTF-8 whose bytes are not', () => {
    const raw = Buffer.from('facture-é.pdf', 'latin1');
    expect(archiveEntryFault(record(raw.toString('utf8'), { rawName: raw }))).toMatchObject({
      kind: 'name',
      fault: 'not-utf8',
    });
  });

  it('takes a CP437 name without the UTF-8 flag whose bytes are not UTF-8', () => {
    const raw = Buffer.from([0x66, 0x82, 0x2e, 0x70, 0x64, 0x66]); // "fé.pdf" in CP437
    expect(archiveEntryFault(record('f\u00e9.pdf', { rawName: raw, utf8Flag: false }))).toBeUndefined();
  });

  it('refuses control bytes that the CP437 reading shows as pictures (0x0A as "◙")', () => {
    const raw = Buffer.from('two\nlines.pdf', 'latin1');
    expect(archiveEntryFault(record('two\u25d9lines.pdf', { rawName: raw, utf8Flag: false }))).toMatchObject({
      kind: 'name',
      fault: 'control',
    });
  });

  it('refuses a right-to-left override stored as UTF-8 without the UTF-8 flag', () => {
    const raw = Buffer.from('invoice\u202Efdp.exe.pdf', 'utf8');
    // yauzl's CP437 reading of E2 80 AE: "ΓÇ«", harmless; the UTF-8 reading is not.
    expect(
      archiveEntryFault(record('invoice\u0393\u00c7\u00abfdp.exe.pdf', { rawName: raw, utf8Flag: false })),
    ).toMatchObject({ kind: 'name', fault: 'control', segment: 'invoice\u202Efdp.exe.pdf' });
  });

  it('refuses a stored name that climbs out while a Unicode path field shows a safe one', () => {
    expect(archiveEntryFault(record('evil.pdf', { rawName: Buffer.from('../evil.pdf') }))).toEqual({
      kind: 'unsafe-path',
      reading: '../evil.pdf',
    });
    expect(archiveEntryFault(record('evil.pdf', { rawName: Buffer.from('..\\evil.pdf') }))).toMatchObject({
      kind: 'unsafe-path',
    });
  });

  it.each([
    [0o120777, 'symbolic link'],
    [0o010644, 'FIFO'],
    [0o020644, 'character device'],
    [0o060644, 'block device'],
    [0o140755, 'socket'],
    [0o110644, 'unknown type'],
  ])('refuses Unix mode %o as a %s', (mode, type) => {
    const entry = record('a.pdf', { versionMadeBy: UNIX, externalFileAttributes: (mode << 16) >>> 0 });
    expect(archiveEntryFault(entry)).toEqual({ kind: 'type', type });
  });

  it('reads the Unix mode from macOS archives (host 19) too', () => {
    const entry = record('a.pdf', {
      versionMadeBy: (19 << 8) | 20,
      externalFileAttributes: (0o120777 << 16) >>> 0,
    });
    expect(entryType(entry)).toBe('symbolic link');
  });

  it('takes regular files, folders and records without a mode', () => {
    const unix = (name: string, mode: number) =>
      record(name, { versionMadeBy: UNIX, externalFileAttributes: (mode << 16) >>> 0 });
    expect(archiveEntryFault(unix('a.pdf', 0o100644))).toBeUndefined();
    expect(archiveEntryFault(unix('d/', 0o040755))).toBeUndefined();
    expect(archiveEntryFault(unix('a.pdf', 0))).toBeUndefined();
  });

  it('ignores the high bits of a record not made on Unix', () => {
    const dos = record('a.pdf', { versionMadeBy: DOS, externalFileAttributes: (0o120777 << 16) >>> 0 });
    expect(archiveEntryFault(dos)).toBeUndefined();
  });

  it('refuses a folder recorded under a file name, by Unix mode or MS-DOS attribute', () => {
    const unix = record('a.pdf', { versionMadeBy: UNIX, externalFileAttributes: (0o040755 << 16) >>> 0 });
    expect(archiveEntryFault(unix)).toEqual({ kind: 'folder-as-file' });
    expect(archiveEntryFault(record('a.pdf', { externalFileAttributes: 0x10 }))).toEqual({
      kind: 'folder-as-file',
    });
  });
});

describe('ArchiveNames', () => {
  it.each([
    ['the same name twice', ['a.pdf', 'a.pdf'], 'a.pdf'],
    ['names differing in case', ['Invoice.pdf', 'INVOICE.PDF'], 'Invoice.pdf'],
    ['NFC and NFD spellings', ['re\u00e7u.pdf', 're\u00e7u.pdf'.normalize('NFD')], 're\u00e7u.pdf'],
    ['a file beside a folder entry of its name', ['x/', 'X'], 'x/'],
    ['a file named as a folder other entries lie in', ['x/a.pdf', 'x'], 'x/a.pdf'],
    ['entries under a file of the folder name', ['x', 'x/a.pdf'], 'x'],
  ])('finds %s', (_what, names, earlier) => {
    const seen = new ArchiveNames();
    const answers = names.map((n) => seen.add(n));
    expect(answers.slice(0, -1).every((a) => a === undefined)).toBe(true);
    expect(answers.at(-1)).toBe(earlier);
  });

  it('takes a folder named again, explicitly or by its entries', () => {
    const seen = new ArchiveNames();
    for (const name of ['m/', 'm/a.pdf', 'M/b.pdf', 'm/', 'm/sub/c.pdf'])
      expect(seen.add(name)).toBeUndefined();
  });

  it('walks a hostile 30,000-level path once', () => {
    const seen = new ArchiveNames();
    const deep = `${'a/'.repeat(30_000)}x.pdf`;
    expect(seen.add(deep)).toBeUndefined();
    expect(seen.add(deep)).toBe(deep);
  });
});
