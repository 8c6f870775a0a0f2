import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import {
  exists,
  existsOrFalse,
  freeName,
  inDir,
  isPlainFile,
  moveFile,
  numberedName,
  writeFileAtomic,
} from '../../src/core/fs.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-fs-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function drop(name: string, content = 'pdf bytes'): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

const errnoError = (code: string) => Object.assign(new Error(code), { code });

describe('exists', () => {
  it('sees files, folders and dangling links, and answers false for a missing path', async () => {
    drop('a.pdf');
    symlinkSync(path.join(dir, 'nowhere'), path.join(dir, 'dangling'));
    expect(await exists(path.join(dir, 'a.pdf'))).toBe(true);
    expect(await exists(dir)).toBe(true);
    expect(await exists(path.join(dir, 'dangling'))).toBe(true);
    expect(await exists(path.join(dir, 'missing.pdf'))).toBe(false);
  });

  it('throws a failure other than ENOENT, where existsOrFalse answers false', async () => {
    drop('file');
    // A path through a file: ENOTDIR, not ENOENT.
    const through = path.join(dir, 'file', 'below');
    await expect(exists(through)).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(await existsOrFalse(through)).toBe(false);
    expect(await existsOrFalse(path.join(dir, 'file'))).toBe(true);
  });

  it('counts only regular files as plain files', async () => {
    drop('a.pdf');
    symlinkSync(path.join(dir, 'a.pdf'), path.join(dir, 'link.pdf'));
    expect(await isPlainFile(path.join(dir, 'a.pdf'))).toBe(true);
    expect(await isPlainFile(path.join(dir, 'link.pdf'))).toBe(false);
    expect(await isPlainFile(dir)).toBe(false);
    expect(await isPlainFile(path.join(dir, 'missing'))).toBe(false);
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

  it('cuts the stem of a taken 255-byte name so the numbered name still fits in 255 bytes', async () => {
    const name = `${'é'.repeat(124)}abc.pdf`;
    expect(Buffer.byteLength(name)).toBe(255);
    drop(name);
    const free = await freeName(dir, name);
    expect(free).toMatch(/^é+a?b?c?\.2\.pdf$/);
    expect(Buffer.byteLength(free)).toBeLessThanOrEqual(255);
  });
});

describe('inDir', () => {
  it('makes a missing folder (2770 like its parent) and runs the write once more', async () => {
    chmodSync(dir, 0o2770);
    const target = path.join(dir, 'error', '2026');
    let tries = 0;
    await inDir(target, async () => {
      tries++;
      await fs.writeFile(path.join(target, 'a.txt'), 'a');
    });
    expect(tries).toBe(2);
    expect(readFileSync(path.join(target, 'a.txt'), 'utf8')).toBe('a');
    expect(statSync(target).mode & 0o7777).toBe(0o2770);
  });

  it('passes on a failure that is not a missing folder, without a second try', async () => {
    let tries = 0;
    const denied = inDir(dir, async () => {
      tries++;
      throw errnoError('EACCES');
    });
    await expect(denied).rejects.toMatchObject({ code: 'EACCES' });
    expect(tries).toBe(1);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the target whole and leaves no temp file', async () => {
    const target = drop('a.pdf.result.json', 'old');
    await writeFileAtomic(target, 'new');
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['a.pdf.result.json']);
  });

  it('removes its temp file when the rename fails', async () => {
    // The target is a folder: the rename over it fails after the temp file was written.
    mkdirSync(path.join(dir, 'taken'));
    mkdirSync(path.join(dir, 'taken', 'inside'));
    await expect(writeFileAtomic(path.join(dir, 'taken'), 'x')).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/),
    });
    expect(readdirSync(dir)).toEqual(['taken']);
  });
});

describe('moveFile', () => {
  it('renames within a file system', async () => {
    const from = drop('done.pdf');
    mkdirSync(path.join(dir, 'archive'));
    const to = path.join(dir, 'archive', 'done.pdf');
    await moveFile(from, to);
    expect(existsSync(from)).toBe(false);
    expect(readFileSync(to, 'utf8')).toBe('pdf bytes');
  });

  it('copies, syncs, renames and unlinks when rename fails with EXDEV (injected)', async () => {
    const from = drop('cross.pdf', 'x'.repeat(100_000));
    mkdirSync(path.join(dir, 'error'));
    const calls: string[] = [];
    const exdev = async (source: string) => {
      calls.push(source);
      throw errnoError('EXDEV');
    };
    const to = path.join(dir, 'error', 'cross.pdf');
    await moveFile(from, to, { rename: exdev });
    expect(calls).toEqual([from]);
    expect(readFileSync(to, 'utf8')).toBe('x'.repeat(100_000));
    expect(existsSync(from)).toBe(false);
    expect(readdirSync(path.join(dir, 'error'))).toEqual(['cross.pdf']);
  });

  it('moves across real file systems (/tmp to the /dev/shm tmpfs)', async () => {
    const shm = mkdtempSync('/dev/shm/docex-move-');
    try {
      const probe = drop('probe.pdf');
      await expect(fs.rename(probe, path.join(shm, 'probe.pdf'))).rejects.toMatchObject({ code: 'EXDEV' });
      const from = drop('real.pdf', 'real');
      await moveFile(from, path.join(shm, 'real.pdf'));
      expect(readFileSync(path.join(shm, 'real.pdf'), 'utf8')).toBe('real');
      expect(existsSync(from)).toBe(false);
      expect(readdirSync(shm)).toEqual(['real.pdf']);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('keeps the source and leaves no temp file when the cross-file-system copy fails', async () => {
    const from = drop('keep.pdf');
    mkdirSync(path.join(dir, 'error'));
    const exdev = async () => {
      throw errnoError('EXDEV');
    };
    const partialCopy = async (_from: string, to: string) => {
      writeFileSync(to, 'par');
      throw errnoError('ENOSPC');
    };
    await expect(
      moveFile(from, path.join(dir, 'error', 'keep.pdf'), { rename: exdev, copyFile: partialCopy }),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(existsSync(from)).toBe(true);
    expect(readdirSync(path.join(dir, 'error'))).toEqual([]);
  });

  it('wraps a failed rename other than EXDEV in DOCEX_PLACE_FAILED and keeps the source', async () => {
    const from = drop('x.pdf');
    const eacces = async () => {
      throw errnoError('EACCES');
    };
    await expect(moveFile(from, path.join(dir, 'y.pdf'), { rename: eacces })).rejects.toSatisfy((e) =>
      isDocexError(e, 'DOCEX_PLACE_FAILED'),
    );
    expect(existsSync(from)).toBe(true);
  });
});
