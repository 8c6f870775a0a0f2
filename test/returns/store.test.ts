import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { type NewJob, ReturnsStore } from '../../src/returns/store.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-returns-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const job = (jobId: string, itemId: number, fileName: string, sourceId = itemId): NewJob => ({
  jobId,
  source: { itemId: sourceId, folder: 'pdf', fileName, sha256: 'ab', claimedAt: 0, day: '2026-11-21' },
  statusPath: (collision) => statusFilePath('2026-11-21', fileName, sourceId, collision),
  itemId,
  rowIndex: undefined,
  label: undefined,
  jobName: undefined,
  recordedAt: 0,
  firstPollAt: 10,
});

describe('returns store', () => {
  it('is created with mode 0600 and records jobs once, with the feed cursor in the same transaction', () => {
    const file = path.join(dir, 'returns.sqlite');
    const store = ReturnsStore.open(file, 0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(store.addJobs([job('job_1', 1, 'a.pdf'), job('job_2', 2, 'a.pdf')], 'cursor', '7', 0)).toBe(2);
    // The same batch again (a cursor that never reached the disk) adds nothing.
    expect(store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '7', 0)).toBe(0);
    expect(store.getMeta('cursor')).toBe('7');
    expect(store.source(1)?.statusPath).toBe('2026-11-21/a.pdf.status.json');
    expect(store.source(2)?.statusPath).toBe('2026-11-21/a.pdf.2.status.json');
    expect(store.dueJobs(9, 10)).toEqual([]);
    expect(store.dueJobs(10, 10).map((j) => j.jobId)).toEqual(['job_1', 'job_2']);
    store.close();
  });

  it('reopens a done job after a re-send: due now, with its follow window starting again', () => {
    const store = ReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
    store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '1', 0);
    store.recordPoll(
      {
        jobId: 'job_1',
        status: 'COMPLETED',
        jobJson: '{}',
        events: [],
        documents: [],
        nextPollAt: 1e12,
        unchangedPolls: 3,
        done: true,
        changed: false,
      },
      5,
    );
    expect(store.job('job_1')?.done).toBe(true);
    const later = 40 * 86_400_000;
    expect(store.reopenJob('job_1', later)).toBe(true);
    expect(store.job('job_1')).toMatchObject({ done: false, recordedAt: later });
    expect(store.dueJobs(later, 10).map((j) => j.jobId)).toEqual(['job_1']);
    expect(store.reopenJob('job_unknown', later)).toBe(false);
    store.close();
  });

  it('makes failed and parked downloads due now on request (returns retry) with a fresh count, and leaves saved ones alone', () => {
    const store = ReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
    store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '1', 0);
    const doc = (ref: string) => ({
      sendingEventId: 'se_1',
      fileReference: ref,
      jobId: 'job_1',
      type: 'DELIVERY_PROOF',
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
        events: [{ id: 'se_1', businessStatus: 'DELIVERED', status: 'COMPLETED', json: '{}' }],
        documents: [doc('failed'), doc('untried'), doc('saved'), doc('parked')],
        nextPollAt: 1e12,
        unchangedPolls: 0,
        done: true,
        changed: true,
      },
      100,
    );
    const [failed, parked, saved] = store
      .dueDocuments(100, 10)
      .sort((a, b) => a.fileReference.localeCompare(b.fileReference));
    // Sorted: failed, parked, saved, untried.
    store.markDocumentFailed(failed!, 'DOCEX_NETWORK: no answer', 500_000);
    store.markDocumentParked(parked!, 'DOCEX_RESPONSE_INVALID: 3 tries in a row failed');
    store.markDocumentDone(saved!, undefined, 100);
    const untriedLater = store.dueDocuments(1e13, 10);
    // A parked document is never due by time, only by `returns retry`.
    expect(untriedLater.map((d) => d.fileReference).sort()).toEqual(['failed', 'untried']);
    expect(store.counts().documentsParked).toBe(1);

    expect(store.retryFailedDocumentsNow(200)).toBe(2);
    expect(
      store
        .dueDocuments(200, 10)
        .map((d) => d.fileReference)
        .sort(),
    ).toEqual(['failed', 'parked', 'untried']);
    expect(store.dueDocuments(200, 10).every((d) => d.failures === 0)).toBe(true);
    // Already due: nothing more to move.
    expect(store.retryFailedDocumentsNow(200)).toBe(0);
    store.close();
  });

  it('refuses a store written by a newer agent with DOCEX_RETURNS_STORE_VERSION', () => {
    const file = path.join(dir, 'returns.sqlite');
    ReturnsStore.open(file, 0).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    expect(() => ReturnsStore.open(file, 0)).toThrow(
      expect.objectContaining({ code: 'DOCEX_RETURNS_STORE_VERSION' }),
    );
  });
});
