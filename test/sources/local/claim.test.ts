import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../../src/core/errors.js';
import {
  claimFile,
  freeName,
  moveToFolder,
  numberedName,
  recoverProcessing,
  releaseClaim,
} from '../../../src/sources/local/claim.js';

let dir: string;
let processing: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-claim-'));
  // A drop folder of the 2770 group model (systemd/README.md).
  chmodSync(dir, 0o2770);
  processing = path.join(dir, '.processing');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function drop(name: string, content = 'pdf bytes'): { path: string; size: number; mtimeMs: number } {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  const st = statSync(p);
  return { path: p, size: st.size, mtimeMs: st.mtimeMs };
}

describe('claimFile', () => {
  it('claims a 255-byte name dropped twice under a shortened numbered name, not ENAMETOOLONG', async () => {
    const name = `${'é'.repeat(124)}abc.pdf`;
    expect(Buffer.byteLength(name)).toBe(255);
    const first = drop(name, 'first');
    expect(await claimFile(first.path, processing, first)).toMatchObject({ outcome: 'claimed' });
    const second = drop(name, 'second');
    const r = await claimFile(second.path, processing, second);
    expect(r).toMatchObject({ outcome: 'claimed' });
    const claimed = path.basename((r as { claimedPath: string }).claimedPath);
    expect(claimed).toMatch(/^é+a?b?c?\.2\.pdf$/);
    expect(Buffer.byteLength(claimed)).toBeLessThanOrEqual(255);
    expect(readFileSync(path.join(processing, claimed), 'utf8')).toBe('second');
  });

  it('moves the file into .processing (made 2770 like its drop folder) and reports its stamp', async () => {
    const f = drop('invoice 2026 é.pdf');
    const r = await claimFile(f.path, processing, f);
    expect(r).toEqual({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'invoice 2026 é.pdf'),
      size: f.size,
      mtimeMs: f.mtimeMs,
    });
    expect(existsSync(f.path)).toBe(false);
    expect(statSync(processing).mode & 0o7777).toBe(0o2770);
  });

  it('makes .processing again after an operator removed it', async () => {
    const first = drop('first.pdf');
    expect((await claimFile(first.path, processing, first)).outcome).toBe('claimed');
    rmSync(processing, { recursive: true });
    const second = drop('second.pdf');
    expect(await claimFile(second.path, processing, second)).toMatchObject({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'second.pdf'),
    });
    expect(statSync(processing).mode & 0o7777).toBe(0o2770);
  });

  it('lets exactly one of many racing claimers win the same file', async () => {
    for (let round = 0; round < 20; round++) {
      const f = drop(`race-${round}.pdf`);
      const results = await Promise.all(Array.from({ length: 4 }, () => claimFile(f.path, processing, f)));
      expect(results.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'lost')).toHaveLength(3);
    }
    expect(readdirSync(processing)).toHaveLength(20);
  });

  it('reports lost when the file is already gone', async () => {
    expect(await claimFile(path.join(dir, 'gone.pdf'), processing, { size: 1, mtimeMs: 1 })).toEqual({
      outcome: 'lost',
    });
  });

  it('keeps a leftover of the same name in .processing and claims under a numbered name', async () => {
    await fs.mkdir(processing);
    writeFileSync(path.join(processing, 'a.pdf'), 'old');
    const f = drop('a.pdf', 'new');
    const r = await claimFile(f.path, processing, f);
    expect(r.outcome).toBe('claimed');
    expect(r.outcome === 'claimed' && path.basename(r.claimedPath)).toBe('a.2.pdf');
    expect(readFileSync(path.join(processing, 'a.pdf'), 'utf8')).toBe('old');
  });

  it('reports changed when size or mtime differ from the stable observation', async () => {
    const f = drop('growing.pdf', 'abc');
    const r = await claimFile(f.path, processing, { size: 2, mtimeMs: f.mtimeMs });
    expect(r.outcome).toBe('changed');
  });

  it('wraps other rename failures in DOCEX_SOURCE_CLAIM_FAILED', async () => {
    const f = drop('x.pdf');
    const eacces = async () => {
      throw Object.assign(new Error('denied'), { code: 'EACCES' });
    };
    await expect(claimFile(f.path, processing, f, eacces)).rejects.toSatisfy((e) =>
      isDocexError(e, 'DOCEX_SOURCE_CLAIM_FAILED'),
    );
  });
});

describe('releaseClaim', () => {
  it('puts a claimed file back under its name', async () => {
    const f = drop('back.pdf');
    const r = await claimFile(f.path, processing, f);
    expect(r.outcome === 'claimed' && (await releaseClaim(r.claimedPath, f.path))).toBe(true);
    expect(existsSync(f.path)).toBe(true);
    expect(readdirSync(processing)).toEqual([]);
  });

  it('never overwrites a new file that took the name meanwhile', async () => {
    const f = drop('back.pdf', 'first');
    const r = await claimFile(f.path, processing, f);
    writeFileSync(f.path, 'second');
    expect(r.outcome === 'claimed' && (await releaseClaim(r.claimedPath, f.path))).toBe(false);
    expect(readFileSync(f.path, 'utf8')).toBe('second');
    expect(readdirSync(processing)).toEqual(['back.pdf']);
  });
});

describe('recoverProcessing', () => {
  it('returns nothing when there is no .processing folder', async () => {
    expect(await recoverProcessing(dir)).toEqual([]);
  });

  it('lists files left in flight, with their markers attached and not listed on their own', async () => {
    await fs.mkdir(processing);
    writeFileSync(path.join(processing, 'b.pdf'), 'bb');
    writeFileSync(path.join(processing, 'a.pdf'), 'a');
    writeFileSync(path.join(processing, 'a.pdf.done'), '');
    await fs.mkdir(path.join(processing, 'sub'));
    const found = await recoverProcessing(dir, { markerSuffixes: ['.done'] });
    expect(found.map((f) => [f.name, f.size, f.markerPath])).toEqual([
      ['a.pdf', 1, path.join(processing, 'a.pdf.done')],
      ['b.pdf', 2, undefined],
    ]);
  });
});

describe('moveToFolder', () => {
  it('renames into the target folder, creating it', async () => {
    const f = drop('done.pdf');
    const target = await moveToFolder(f.path, path.join(dir, 'archive', '2026'));
    expect(target).toBe(path.join(dir, 'archive', '2026', 'done.pdf'));
    expect(existsSync(f.path)).toBe(false);
  });

  it('adds a number when the name exists and asked to, else fails with DOCEX_SOURCE_TARGET_EXISTS', async () => {
    const archive = path.join(dir, 'archive');
    await fs.mkdir(archive);
    writeFileSync(path.join(archive, 'dup.pdf'), 'old');
    const f = drop('dup.pdf');
    await expect(moveToFolder(f.path, archive)).rejects.toSatisfy((e) =>
      isDocexError(e, 'DOCEX_SOURCE_TARGET_EXISTS'),
    );
    expect(await moveToFolder(f.path, archive, { suffixIfExists: true })).toBe(
      path.join(archive, 'dup.2.pdf'),
    );
    expect(readFileSync(path.join(archive, 'dup.pdf'), 'utf8')).toBe('old');
  });

  it('copies, syncs, renames and unlinks when rename fails with EXDEV (injected)', async () => {
    const f = drop('cross.pdf', 'x'.repeat(100_000));
    const calls: string[] = [];
    const exdev = async (from: string) => {
      calls.push(from);
      throw Object.assign(new Error('cross-device'), { code: 'EXDEV' });
    };
    const target = await moveToFolder(f.path, path.join(dir, 'error'), { rename: exdev });
    expect(calls).toEqual([f.path]);
    expect(readFileSync(target, 'utf8')).toBe('x'.repeat(100_000));
    expect(existsSync(f.path)).toBe(false);
    expect(readdirSync(path.join(dir, 'error'))).toEqual(['cross.pdf']);
  });

  it('moves across real filesystems (/tmp to the /dev/shm tmpfs)', async () => {
    const shm = mkdtempSync('/dev/shm/docex-move-');
    try {
      const probe = drop('probe.pdf');
      await expect(fs.rename(probe.path, path.join(shm, 'probe.pdf'))).rejects.toMatchObject({
        code: 'EXDEV',
      });
      const f = drop('real.pdf', 'real');
      const target = await moveToFolder(f.path, shm);
      expect(readFileSync(target, 'utf8')).toBe('real');
      expect(existsSync(f.path)).toBe(false);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('keeps the source and leaves no temp file when the cross-filesystem copy fails', async () => {
    const f = drop('keep.pdf');
    const exdev = async () => {
      throw Object.assign(new Error('cross-device'), { code: 'EXDEV' });
    };
    const partialCopy = async (_from: string, to: string) => {
      writeFileSync(to, 'par');
      throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
    };
    const target = path.join(dir, 'error');
    await expect(
      moveToFolder(f.path, target, { rename: exdev, copyFile: partialCopy }),
    ).rejects.toMatchObject({
      code: 'ENOSPC',
    });
    expect(existsSync(f.path)).toBe(true);
    expect(readdirSync(target)).toEqual([]);
  });
});

describe('names', () => {
  it('numbers before the extension', () => {
    expect(numberedName('invoice.pdf', 2)).toBe('invoice.2.pdf');
    expect(numberedName('README', 3)).toBe('README.3');
    expect(numberedName('a b.tar.gz', 2)).toBe('a b.tar.2.gz');
  });

  it('finds the first free numbered name', async () => {
    writeFileSync(path.join(dir, 'n.pdf'), '');
    writeFileSync(path.join(dir, 'n.2.pdf'), '');
    expect(await freeName(dir, 'n.pdf')).toBe('n.3.pdf');
    expect(await freeName(dir, 'free.pdf')).toBe('free.pdf');
  });
});
