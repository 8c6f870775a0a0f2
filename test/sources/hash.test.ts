import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashFile, readAndHash } from '../../src/sources/hash.js';

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-hash-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('hashFile', () => {
  it('streams the SHA-256 and byte count of a multi-chunk file', async () => {
    const content = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    const p = path.join(dir, 'big name é.pdf');
    writeFileSync(p, content);
    expect(await hashFile(p)).toEqual({
      sha256: createHash('sha256').update(content).digest('hex'),
      size: content.length,
    });
  });

  it('hashes every byte exactly once across the boundaries of its two alternating read buffers', async () => {
    const chunk = 1024 * 1024;
    for (const size of [
      1,
      chunk - 1,
      chunk,
      chunk + 1,
      2 * chunk,
      2 * chunk + 1,
      3 * chunk - 1,
      4 * chunk + 3,
    ]) {
      // Random bytes: a stale or doubled piece of the buffer would change the digest.
      const content = randomBytes(size);
      const p = path.join(dir, `r-${size}`);
      writeFileSync(p, content);
      expect(await hashFile(p)).toEqual({ sha256: sha256(content), size });
    }
  });

  it('hashes an empty file', async () => {
    const p = path.join(dir, 'empty');
    writeFileSync(p, '');
    expect(await hashFile(p)).toEqual({
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      size: 0,
    });
  });
});

describe('readAndHash', () => {
  it('keeps the bytes of a file up to the limit, with the hash and size of exactly those bytes', async () => {
    const file = path.join(dir, 'a.pdf');
    writeFileSync(file, 'x'.repeat(1000));
    const read = await readAndHash(file, 1000);
    expect(read.bytes?.toString()).toBe('x'.repeat(1000));
    expect(read).toMatchObject({ sha256: sha256('x'.repeat(1000)), size: 1000, statSize: 1000 });
  });

  it('hashes a file over the limit by streaming and keeps nothing', async () => {
    const file = path.join(dir, 'big.pdf');
    writeFileSync(file, 'y'.repeat(1001));
    const read = await readAndHash(file, 1000);
    expect(read.bytes).toBeUndefined();
    expect(read).toMatchObject({ sha256: sha256('y'.repeat(1001)), size: 1001, statSize: 1001 });
  });

  it('keeps nothing of a symbolic link (the inspection refuses it) but hashes what it points to', async () => {
    const target = path.join(dir, 'target.pdf');
    writeFileSync(target, 'z');
    symlinkSync(target, path.join(dir, 'link.pdf'));
    const read = await readAndHash(path.join(dir, 'link.pdf'), 1000);
    expect(read.bytes).toBeUndefined();
    expect(read.sha256).toBe((await hashFile(target)).sha256);
  });

  it('keeps an empty file as zero bytes', async () => {
    const file = path.join(dir, 'empty.pdf');
    writeFileSync(file, '');
    const read = await readAndHash(file, 1000);
    expect(read.bytes).toHaveLength(0);
    expect(read).toMatchObject({ size: 0, statSize: 0, sha256: sha256('') });
  });
});
