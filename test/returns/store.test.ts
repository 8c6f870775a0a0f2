import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { CSV_DAYS_DUE, SqliteReturnsStore, STALE_SOURCES } from '../../src/returns/sqlite-store.js';
import type { NewJob } from '../../src/returns/store.js';
import { recordPolled } from './support/record-poll.js';

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
  it('is created with mode 0600 and records jobs once, with the feed cursor in the same transaction', async () => {
    const file = path.join(dir, 'returns.sqlite');
    const store = SqliteReturnsStore.open(file, 0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await store.addJobs([job('job_1', 1, 'a.pdf'), job('job_2', 2, 'a.pdf')], 'cursor', '7', 0)).toBe(
      2,
    );
    // The same batch again (a cursor that never reached the disk) adds nothing.
    expect(await store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '7', 0)).toBe(0);
    expect(await store.getMeta('cursor')).toBe('7');
    expect((await store.source(1))?.statusPath).toBe('2026-11-21/a.pdf.status.json');
    expect((await store.source(2))?.statusPath).toBe('2026-11-21/a.pdf.2.status.json');
    expect(await store.dueJobs(9, 10)).toEqual([]);
    expect((await store.dueJobs(10, 10)).map((j) => j.jobId)).toEqual(['job_1', 'job_2']);
    await store.close();
  });

  it('reopens a done job after a re-send: due now, with its follow window starting again', async () => {
    const store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
    await store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '1', 0);
    await store.recordPoll(
      {
        jobId: 'job_1',
        status: 'COMPLETED',
        jobJson: '{}',
        nextPollAt: 1e12,
        unchangedPolls: 3,
        done: true,
        changed: false,
      },
      5,
    );
    expect((await store.job('job_1'))?.done).toBe(true);
    const later = 40 * 86_400_000;
    expect(await store.reopenJob('job_1', later)).toBe(true);
    expect(await store.job('job_1')).toMatchObject({ done: false, recordedAt: later });
    expect((await store.dueJobs(later, 10)).map((j) => j.jobId)).toEqual(['job_1']);
    expect(await store.reopenJob('job_unknown', later)).toBe(false);
    await store.close();
  });

  it('makes failed and parked downloads due now on request (returns retry) with a fresh count, and leaves saved ones alone', async () => {
    const store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
    await store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '1', 0);
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
    await recordPolled(
      store,
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
    const [failed, parked, saved] = (await store.dueDocuments(100, 10)).sort((a, b) =>
      a.fileReference.localeCompare(b.fileReference),
    );
    // Sorted: failed, parked, saved, untried.
    await store.markDocumentFailed(failed!, 'DOCEX_NETWORK: no answer', 500_000);
    await store.markDocumentParked(parked!, 'DOCEX_RESPONSE_INVALID: 3 tries in a row failed');
    await store.markDocumentDone(saved!, undefined, 100);
    const untriedLater = await store.dueDocuments(1e13, 10);
    // A parked document is never due by time, only by `returns retry`.
    expect(untriedLater.map((d) => d.fileReference).sort()).toEqual(['failed', 'untried']);
    expect((await store.counts()).documentsParked).toBe(1);

    expect(await store.retryFailedDocumentsNow(200)).toBe(2);
    expect((await store.dueDocuments(200, 10)).map((d) => d.fileReference).sort()).toEqual([
      'failed',
      'parked',
      'untried',
    ]);
    expect((await store.dueDocuments(200, 10)).every((d) => d.failures === 0)).toBe(true);
    // Already due: nothing more to move.
    expect(await store.retryFailedDocumentsNow(200)).toBe(0);
    await store.close();
  });

  it('lists stale status files through the sources_stale index, not by reading every source of the year', async () => {
    const file = path.join(dir, 'returns.sqlite');
    const store = SqliteReturnsStore.open(file, 0);
    await store.addJobs([job('job_1', 1, 'a.pdf'), job('job_2', 2, 'b.pdf')], 'cursor', '2', 0);
    expect((await store.staleSources(10)).map((s) => s.itemId)).toEqual([1, 2]);
    expect(await store.writeStatusAlone(1, async () => true)).toBe(true);
    expect((await store.staleSources(10)).map((s) => s.itemId)).toEqual([2]);
    await store.close();
    const db = new Database(file, { readonly: true });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${STALE_SOURCES}`).all(10) as { detail: string }[]).map(
      (r) => r.detail,
    );
    db.close();
    expect(plan).toEqual(['SCAN sources USING INDEX sources_stale']);
  });

  it('finds the past days without a CSV day by day through the events_day index, not by reading every event', async () => {
    const file = path.join(dir, 'returns.sqlite');
    const store = SqliteReturnsStore.open(file, 0);
    await store.addJobs([job('job_1', 1, 'a.pdf')], 'cursor', '1', 0);
    const db = new Database(file);
    const event = db.prepare(
      `INSERT INTO events (id, job_id, business_status, status, final_at, final_day, event_json, updated_at)
       VALUES (?, 'job_1', 'DELIVERED', 'FINAL', 0, ?, '{}', 0)`,
    );
    const days = ['2026-01-05', '2026-01-05', '2026-02-10', '2026-03-01', '2026-03-02', null, '2026-03-04'];
    for (const [i, day] of days.entries()) event.run(`ev_${i}`, day);
    await store.recordCsv('2026-02-10', 1, 0);
    expect(await store.csvDaysDue('2026-03-04')).toEqual(['2026-01-05', '2026-03-01', '2026-03-02']);
    expect(await store.csvDaysDue('2026-01-05')).toEqual([]);
    const plan = (
      db.prepare(`EXPLAIN QUERY PLAN ${CSV_DAYS_DUE}`).all({ today: '2026-03-04' }) as {
        detail: string;
      }[]
    ).map((r) => r.detail);
    db.close();
    await store.close();
    expect(plan).toContain('SEARCH events USING COVERING INDEX events_day (final_day>?)');
    expect(plan.filter((d) => d.startsWith('SCAN events'))).toEqual([]);
  });

  it('refuses a store written by a newer agent with DOCEX_RETURNS_STORE_VERSION', async () => {
    const file = path.join(dir, 'returns.sqlite');
    await SqliteReturnsStore.open(file, 0).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    expect(() => SqliteReturnsStore.open(file, 0)).toThrow(
      expect.objectContaining({ code: 'DOCEX_RETURNS_STORE_VERSION' }),
    );
  });
});
