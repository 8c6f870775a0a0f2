import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertRealPath, ensureRealDir } from '../../src/core/real-dir.js';
import { LocalTarget } from '../../src/outputs/local-target.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-realdir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('real directories only', () => {
  it('refuses a link at any level from the root down, and accepts plain folders or missing ones', async () => {
    const outside = path.join(dir, 'outside');
    mkdirSync(path.join(dir, 'archive', '2026-11-26'), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, path.join(dir, 'archive', 'linked-day'));
    await expect(
      assertRealPath(path.join(dir, 'archive'), path.join(dir, 'archive', '2026-11-26')),
    ).resolves.toBeUndefined();
    await expect(
      assertRealPath(path.join(dir, 'archive'), path.join(dir, 'archive', 'missing')),
    ).resolves.toBeUndefined();
    await expect(
      assertRealPath(path.join(dir, 'archive'), path.join(dir, 'archive', 'linked-day', 'x')),
    ).rejects.toMatchObject({ code: 'DOCEX_FOLDER_UNSAFE' });
    await expect(ensureRealDir(path.join(dir, 'archive', 'linked-day'))).rejects.toMatchObject({
      code: 'DOCEX_FOLDER_UNSAFE',
    });
  });

  it('writes no output through a linked sub-folder of an output folder', async () => {
    const outside = path.join(dir, 'outside-out');
    mkdirSync(path.join(dir, 'out'), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, path.join(dir, 'out', '2026'));
    const target = new LocalTarget(path.join(dir, 'out'));
    await expect(target.write('2026/statuses.csv', 'a,b\n')).rejects.toMatchObject({
      code: 'DOCEX_OUTPUT_WRITE',
      cause: { code: 'DOCEX_FOLDER_UNSAFE' },
    });
    expect(readdirSync(outside)).toEqual([]);
    // A missing level below the link is not made through it either.
    await expect(target.write('2026/11/statuses.csv', 'a,b\n')).rejects.toMatchObject({
      cause: { code: 'DOCEX_FOLDER_UNSAFE' },
    });
    expect(readdirSync(outside)).toEqual([]);
  });
});
