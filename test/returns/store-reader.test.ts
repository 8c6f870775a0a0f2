import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReturnsStore } from '../../src/returns/store.js';
import { ReturnsReader } from '../../src/returns/store-reader.js';
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
function storeWithOneJob(): void {
  const store = ReturnsStore.open(file, 0);
  addOneJob(store);
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
  store.recordPoll(
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
  const saved = store.dueDocuments(100, 10).find((d) => d.fileReference === 'proof')!;
  store.markDocumentDone(saved, undefined, 100);
  store.close();
}

describe('returns store reader', () => {
  it('reads nothing while the store does not exist, and the written proofs once it does', () => {
    const reader = new ReturnsReader(file);
    try {
      expect(reader.proofsArchived()).toBeUndefined();
      expect(reader.followedJob('job_1')).toBeUndefined();
      storeWithOneJob();
      expect(reader.proofsArchived()).toBe(1);
    } finally {
      reader.close();
    }
  });

  it('answers a followed job with its sending events and their documents, and an unknown job as empty', () => {
    storeWithOneJob();
    const reader = new ReturnsReader(file);
    try {
      const followed = reader.followedJob('job_1');
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
      expect(reader.followedJob('job_unknown')).toEqual({ job: undefined, events: [], documents: [] });
    } finally {
      reader.close();
    }
  });

  it('reads an unreadable store as no proofs for the metrics, and throws for a job look-up', () => {
    writeFileSync(file, 'not a database');
    const reader = new ReturnsReader(file);
    try {
      expect(reader.proofsArchived()).toBeUndefined();
      expect(() => reader.followedJob('job_1')).toThrow();
    } finally {
      reader.close();
    }
  });
});
