import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rejectEntry } from '../../../src/pipeline/reject-entry.js';
import { type Harness, makeHarness, makeTempDir } from './support.js';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

describe('LocalSource: settle rule on real files', () => {
  it('never takes a file written in chunks over 10 s, and takes it 2 s after the last write', async () => {
    h = makeHarness();
    await h.source.start();
    const p = h.write('slow.pdf', 'chunk-0;');
    for (let i = 1; i <= 20; i++) {
      h.source.notice('slow.pdf');
      await h.step(500);
      expect(h.claimed).toEqual([]);
      appendFileSync(p, `chunk-${i};`);
    }
    await h.step(500);
    await h.step(1_000);
    expect(h.claimed).toEqual([]);
    await h.step(1_000);
    expect(h.names()).toEqual(['slow.pdf']);
    expect(h.claimed[0]!.size).toBe(
      Buffer.byteLength('chunk-0;') + [...Array(20)].reduce((n, _, i) => n + `chunk-${i + 1};`.length, 0),
    );
  });

  it('does not take a Windows-style copy with an old mtime before the settle time', async () => {
    h = makeHarness();
    const p = h.write('copied.pdf');
    utimesSync(p, new Date('2019-01-01'), new Date('2019-01-01'));
    await h.source.start();
    await h.step(0);
    await h.step(1_999);
    expect(h.claimed).toEqual([]);
    await h.step(1);
    expect(h.names()).toEqual(['copied.pdf']);
  });

  it('waits on a zero-byte file and takes it once filled and settled', async () => {
    h = makeHarness();
    const p = h.write('chmod-later.pdf', '');
    await h.source.start();
    await h.step(0);
    await h.step(10_000);
    expect(h.claimed).toEqual([]);
    writeFileSync(p, 'now filled');
    await h.step(100);
    await h.step(1_999);
    expect(h.claimed).toEqual([]);
    await h.step(1);
    expect(h.claimed.map((c) => [c.name, c.size])).toEqual([['chmod-later.pdf', 10]]);
  });

  it('waits while the file cannot be opened, then takes it', async () => {
    let readable = false;
    h = makeHarness({}, { probeReadable: async () => readable });
    h.write('locked.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(5_000);
    expect(h.claimed).toEqual([]);
    readable = true;
    await h.step(100);
    expect(h.names()).toEqual(['locked.pdf']);
  });

  it('moves the claimed file into .processing and hands over both paths', async () => {
    h = makeHarness();
    h.write('a.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([
      expect.objectContaining({
        folder: 'invoices',
        name: 'a.pdf',
        originalPath: path.join(h.dir, 'a.pdf'),
        claimedPath: path.join(h.dir, '.processing', 'a.pdf'),
        size: 7,
      }),
    ]);
    expect(readdirSync(h.dir)).toEqual(['.processing']);
  });
});

describe('LocalSource: done-marker rule', () => {
  it('takes the file only once its marker exists and moves the marker with it', async () => {
    h = makeHarness({ stability: { kind: 'done-marker', suffixes: ['.done', '.ready'] } });
    h.write('inv.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(60_000);
    expect(h.claimed).toEqual([]);
    h.write('inv.pdf.ready', '');
    h.source.notice('inv.pdf.ready');
    await h.step(0);
    expect(h.names()).toEqual(['inv.pdf']);
    expect(h.claimed[0]!.markerPath).toBe(path.join(h.dir, '.processing', 'inv.pdf.ready'));
    expect(readdirSync(h.dir)).toEqual(['.processing']);
    expect(readdirSync(path.join(h.dir, '.processing')).sort()).toEqual(['inv.pdf', 'inv.pdf.ready']);
  });

  it('never takes a marker as a file, nor a marker without its data file', async () => {
    h = makeHarness({ stability: { kind: 'done-marker', suffixes: ['.done'] } });
    h.write('orphan.pdf.done', '');
    await h.source.start();
    await h.step(0);
    await h.step(10_000);
    expect(h.claimed).toEqual([]);
    expect(h.source.pendingCount).toBe(0);
  });

  it('ignores a marker older than its data file (data rewritten after the marker)', async () => {
    h = makeHarness({ stability: { kind: 'done-marker', suffixes: ['.done'] } });
    const marker = h.write('re.pdf.done', '');
    utimesSync(marker, new Date('2020-01-01'), new Date('2020-01-01'));
    h.write('re.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(10_000);
    expect(h.claimed).toEqual([]);
  });
});

describe('LocalSource: rename-in rule', () => {
  it('ignores temporary names and takes the renamed file at once', async () => {
    h = makeHarness({ stability: { kind: 'rename-in' } });
    for (const name of ['up.pdf.part', 'up.pdf.tmp', '~$up.docx', '.up.pdf', 'up.pdf.crdownload'])
      h.write(name);
    await h.source.start();
    await h.step(0);
    await h.step(60_000);
    expect(h.claimed).toEqual([]);
    renameSync(path.join(h.dir, 'up.pdf.part'), path.join(h.dir, 'up.pdf'));
    await h.source.scan();
    await h.step(0);
    expect(h.names()).toEqual(['up.pdf']);
  });
});

describe('LocalSource: names and filters', () => {
  it('applies include and exclude globs, case-insensitively', async () => {
    h = makeHarness({ include: ['*.pdf', '*.csv'], exclude: ['draft-*'] });
    for (const name of ['a.pdf', 'B.PDF', 'c.csv', 'draft-d.pdf', 'e.txt']) h.write(name);
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.names().sort()).toEqual(['B.PDF', 'a.pdf', 'c.csv']);
    expect(existsSync(path.join(h.dir, 'draft-d.pdf'))).toBe(true);
  });

  it('takes names with spaces, unicode and newlines', async () => {
    h = makeHarness();
    const names = ['facture été 2026.pdf', '請求書 №7.pdf', 'line\nbreak.pdf', ' leading space.pdf'];
    for (const name of names) h.write(name, name);
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.names().sort()).toEqual([...names].sort());
    for (const c of h.claimed) expect(existsSync(c.claimedPath)).toBe(true);
  });

  it('never follows or takes a symlink, and warns once', async () => {
    const outside = makeTempDir();
    writeFileSync(path.join(outside, 'secret.pdf'), 'not yours');
    h = makeHarness();
    symlinkSync(path.join(outside, 'secret.pdf'), path.join(h.dir, 'link.pdf'));
    await h.source.start();
    h.source.notice('link.pdf');
    await h.step(0);
    await h.step(2_000);
    await h.source.scan();
    expect(h.claimed).toEqual([]);
    expect(h.logs.filter((l) => l['msg'] === 'symlink ignored')).toEqual([
      expect.objectContaining({ file: 'link.pdf', folder: 'invoices' }),
    ]);
    expect(readdirSync(h.dir)).toEqual(['link.pdf']);
  });

  it('never opens or takes a FIFO', async () => {
    h = makeHarness();
    execFileSync('mkfifo', [path.join(h.dir, 'pipe.pdf')]);
    await h.source.start();
    h.source.notice('pipe.pdf');
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    expect(h.source.pendingCount).toBe(0);
  });

  it('moves a symlink and a FIFO, never opened, to the error folder with the reason beside them', async () => {
    const outside = makeTempDir();
    writeFileSync(path.join(outside, 'secret.pdf'), 'not yours');
    const errorDir = path.join(makeTempDir(), 'error');
    h = makeHarness(
      {},
      {
        onRejected: async (entry) => {
          await rejectEntry(entry, { folder: 'invoices', workflowId: 'wf', errorDir, now: 0 });
        },
      },
    );
    symlinkSync(path.join(outside, 'secret.pdf'), path.join(h.dir, 'link.pdf'));
    execFileSync('mkfifo', [path.join(h.dir, 'pipe.pdf')]);
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    expect(readdirSync(h.dir).filter((n) => !n.startsWith('.'))).toEqual([]);
    expect(readdirSync(errorDir).sort()).toEqual([
      'link.pdf',
      'link.pdf.error.json',
      'link.pdf.error.txt',
      'pipe.pdf',
      'pipe.pdf.error.json',
      'pipe.pdf.error.txt',
    ]);
    expect(lstatSync(path.join(errorDir, 'link.pdf')).isSymbolicLink()).toBe(true);
    const codes = ['link.pdf', 'pipe.pdf'].map(
      (n) => JSON.parse(readFileSync(path.join(errorDir, `${n}.error.json`), 'utf8')).code,
    );
    expect(codes).toEqual(['DOCEX_INPUT_SYMLINK', 'DOCEX_INPUT_NOT_A_FILE']);
    expect(readFileSync(path.join(outside, 'secret.pdf'), 'utf8')).toBe('not yours');
  });

  it('leaves its own .processing and archive folder, swapped for links, where they are and reports the folder unsafe instead of refusing them as dropped links', async () => {
    const outside = makeTempDir();
    const refused: string[] = [];
    const unsafe: string[] = [];
    h = makeHarness(
      {},
      {
        ownDirs: ['.archive'],
        onRejected: async (entry) => {
          refused.push(entry.name);
        },
        onUnsafe: (err) => {
          unsafe.push(`${err.code} ${err.message}`);
        },
      },
    );
    symlinkSync(outside, path.join(h.dir, '.processing'));
    symlinkSync(outside, path.join(h.dir, '.archive'));
    symlinkSync(outside, path.join(h.dir, '.dropped-link'));
    await h.source.start();
    expect(refused).toEqual(['.dropped-link']);
    expect(unsafe.sort()).toEqual(
      ['.archive', '.processing'].map(
        (n) =>
          `DOCEX_FOLDER_UNSAFE ${path.join(h.dir, n)} is a symbolic link; the agent writes only into real directories. Replace it with a directory.`,
      ),
    );
    expect(lstatSync(path.join(h.dir, '.processing')).isSymbolicLink()).toBe(true);
    expect(lstatSync(path.join(h.dir, '.archive')).isSymbolicLink()).toBe(true);
    h.write('late.pdf');
    h.source.notice('late.pdf');
    await h.step(0);
    await h.step(2_000);
    // The claim checks .processing again: nothing is moved through the link.
    expect(h.claimed).toEqual([]);
    expect(readdirSync(outside)).toEqual([]);
    expect(unsafe).toHaveLength(3);
  });

  it('moves a file whose name is not UTF-8 (Latin-1) to the error folder under its readable name, with the reason beside it', async () => {
    const errorDir = path.join(makeTempDir(), 'error');
    h = makeHarness(
      {},
      {
        onRejected: async (entry) => {
          await rejectEntry(entry, { folder: 'invoices', workflowId: 'wf', errorDir, now: 0 });
        },
      },
    );
    const latin1 = Buffer.from('facture-\u00e9.pdf', 'latin1');
    writeFileSync(Buffer.concat([Buffer.from(`${h.dir}/`), latin1]), 'content');
    h.write('plain.pdf', 'plain');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['plain.pdf']);
    expect(readdirSync(h.dir, { encoding: 'buffer' }).filter((n) => n[0] !== 0x2e)).toEqual([]);
    // Placed under its readable form (U+FFFD for the bad byte), its content untouched.
    expect(readdirSync(errorDir).sort()).toEqual([
      'facture-\ufffd.pdf',
      'facture-\ufffd.pdf.error.json',
      'facture-\ufffd.pdf.error.txt',
    ]);
    expect(readFileSync(path.join(errorDir, 'facture-\ufffd.pdf'), 'utf8')).toBe('content');
    const record = JSON.parse(readFileSync(path.join(errorDir, 'facture-\ufffd.pdf.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_BAD_NAME', file: 'facture-\ufffd.pdf' });
    expect(readFileSync(path.join(errorDir, 'facture-\ufffd.pdf.error.txt'), 'utf8')).toContain(
      'Have the ERP write UTF-8 file names',
    );
  });

  it('ignores sub-folders and what is in .processing', async () => {
    h = makeHarness();
    const sub = path.join(h.dir, 'archive');
    mkdirSync(sub);
    mkdirSync(path.join(h.dir, '.processing'));
    writeFileSync(path.join(sub, 'old.pdf'), 'x');
    writeFileSync(path.join(h.dir, '.processing', 'inflight.pdf'), 'x');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    expect(h.source.pendingCount).toBe(0);
  });
});
