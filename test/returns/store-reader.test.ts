import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import { SqliteReturnsReader } from '../../src/returns/sqlite-store-reader.js';
import { recordPolled } from './support/record-poll.js';
import { addOneJob } from './support/store-fixtures.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-returns-reader-'));
  file = path.join(dir, 'returns.sqlite');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** One followed job with one final sending event and two proof documents, one of them saved. */
async function storeWithOneJob(): Promise<void> {
  const store = SqliteReturnsStore.open(file, 0);
  await addOneJob(store);
  const doc = (ref: string, type: string) => ({
    sendingEventId: 'se_1',
    fileReference: ref,
    jobId: 'job_1',
    type,
    name: `${ref}.pdf`,
    contentType: 'application/pdf',
    size: 10,
    path: `2026-11-21/a/se_1-${ref}.pdf`,
    nextTryAt: 100,
  });
  await recordPolled(
    store,
    {
      jobId: 'job_1',
      status: 'COMPLETED',
      jobJson: '{}',
      events: [{ id: 'se_1', businessStatus: 'DELIVERED', status: 'COMPLETED', json: '{}', finalAt: 50 }],
      documents: [doc('proof', 'DELIVERY_PROOF'), doc('receipt', 'RECEIPT')],
      nextPollAt: 1e12,
      unchangedPolls: 0,
      done: true,
      changed: true,
    },
    100,
  );
  const saved = (await store.dueDocuments(100, 10)).find((d) => d.fileReference === 'proof')!;
  await store.markDocumentDone(saved, undefined, 100);
  await store.close();
}

describe('returns store reader', async () => {
  it('reads nothing while the store does not exist, and the written proofs once it does', async () => {
    const reader = new SqliteReturnsReader(file);
    try {
      expect(await reader.proofsArchived()).toBeUndefined();
      expect(await reader.followedJob('job_1')).toBeUndefined();
      await storeWithOneJob();
      expect(await reader.proofsArchived()).toBe(1);
    } finally {
      await reader.close();
    }
  });

  it('answers a followed job with its sending events and their documents, and an unknown job as empty', async () => {
    await storeWithOneJob();
    const reader = new SqliteReturnsReader(file);
    try {
      const followed = await reader.followedJob('job_1');
      expect(followed?.job).toMatchObject({ jobId: 'job_1', status: 'COMPLETED', done: true });
      expect(followed?.events).toEqual([
        expect.objectContaining({
          id: 'se_1',
          businessStatus: 'DELIVERED',
          status: 'COMPLETED',
          finalAt: 50,
        }),
      ]);
      expect(followed?.documents.map((d) => [d.type, d.state])).toEqual([
        ['DELIVERY_PROOF', 'done'],
        ['RECEIPT', 'pending'],
      ]);
      expect(await reader.followedJob('job_unknown')).toEqual({ job: undefined, events: [], documents: [] });
    } finally {
      await reader.close();
    }
  });

  it('reads an unreadable store as no proofs for the metrics, and throws for a job look-up', async () => {
    writeFileSync(file, 'not a database');
    const reader = new SqliteReturnsReader(file);
    try {
      expect(await reader.proofsArchived()).toBeUndefined();
      await expect(reader.followedJob('job_1')).rejects.toThrow();
    } finally {
      await reader.close();
    }
  });
});
