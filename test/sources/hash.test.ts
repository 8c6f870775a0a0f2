import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashFile } from '../../src/sources/hash.js';

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

  it('hashes an empty file', async () => {
    const p = path.join(dir, 'empty');
    writeFileSync(p, '');
    expect(await hashFile(p)).toEqual({
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      size: 0,
    });
  });
});
