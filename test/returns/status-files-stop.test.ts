import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutputTarget } from '../../src/outputs/types.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import { writeStaleStatusFiles } from '../../src/returns/status-files.js';
import type { ReturnsStore } from '../../src/returns/store.js';

let dir: string;
let store: ReturnsStore;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-status-files-'));
  store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
  const jobs = [1, 2, 3].map((n) => ({
    jobId: `job_${n}`,
    source: { itemId: n, folder: 'pdf', fileName: `${n}.pdf`, sha256: 'ab', claimedAt: 0, day: '2026-11-21' },
    statusPath: (collision: boolean) => statusFilePath('2026-11-21', `${n}.pdf`, n, collision),
    itemId: n,
    rowIndex: undefined,
    label: undefined,
    jobName: undefined,
    recordedAt: 0,
    firstPollAt: 10,
  }));
  await store.addJobs(jobs, 'cursor', '1', 0);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function recordingTarget(): { target: OutputTarget; written: string[] } {
  const written: string[] = [];
  const target = {
    description: 'memory',
    write: async (relPath: string) => {
      written.push(relPath);
    },
  } as unknown as OutputTarget;
  return { target, written };
}

describe('status files', () => {
  it('stops writing when told enough (a stop), and leaves the rest stale for the next pass', async () => {
    const { target, written } = recordingTarget();
    expect(await store.staleSources(10)).toHaveLength(3);
    expect(await writeStaleStatusFiles(store, target, () => written.length >= 1)).toBe(1);
    expect(await store.staleSources(10)).toHaveLength(2);
    expect(await writeStaleStatusFiles(store, target)).toBe(2);
    expect(await store.staleSources(10)).toHaveLength(0);
    expect(new Set(written).size).toBe(3);
  });
});
