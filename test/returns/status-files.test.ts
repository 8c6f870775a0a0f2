import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import { dailyCsvText, renderCsv, writeDailyCsv } from '../../src/returns/status-csv.js';
import { statusFileText, writeStaleStatusFiles } from '../../src/returns/status-files.js';
import type { NewJob, ReturnsStore } from '../../src/returns/store.js';
import { recordPolled } from './support/record-poll.js';
import { buildStatusDocument } from './support/status-document.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-status-files-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const newJob = (jobId: string, rowIndex: number): NewJob => ({
  jobId,
  source: { itemId: 7, folder: 'csv', fileName: 'rows.csv', sha256: 'ab', claimedAt: 0, day: '2026-11-21' },
  statusPath: (collision) => statusFilePath('2026-11-21', 'rows.csv', 7, collision),
  itemId: 7,
  rowIndex,
  label: `row ${rowIndex}`,
  jobName: `name-${jobId}`,
  recordedAt: 0,
  firstPollAt: 10,
});

/** A file of two jobs: one with `events` events (two proofs each, one event stored unreadable), one with none. */
async function storeWithEvents(events: number, finalDay?: string): Promise<ReturnsStore> {
  const store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
  await store.addJobs([newJob('job_a', 1), newJob('job_b', 2)], 'cursor', '1', 0);
  const ids = Array.from({ length: events }, (_, i) => `se_${String(i).padStart(5, '0')}`);
  await recordPolled(
    store,
    {
      jobId: 'job_a',
      status: 'COMPLETED',
      jobJson: JSON.stringify({
        id: 'job_a',
        status: 'COMPLETED',
        errorList: [{ message: 'one row "late"' }],
      }),
      events: ids.map((id, i) => ({
        id,
        businessStatus: 'DELIVERED',
        status: 'COMPLETED',
        // Several share a millisecond: the CSV orders by final time, then id.
        ...(finalDay ? { finalAt: 1_700_000_000_000 + (i % 7), finalDay } : {}),
        json:
          i === 3
            ? '{not json'
            : JSON.stringify({
                id,
                businessStatus: 'DELIVERED',
                status: 'COMPLETED',
                properties: [{ name: 'recipient', value: `r${i}@example.com\n` }],
                documents: [
                  { type: 'DELIVERY_PROOF', fileReference: `${id}-p`, name: 'proof.pdf' },
                  { type: 'SUBMISSION_REPORT', fileReference: `${id}-s`, name: 'report.pdf' },
                ],
              }),
      })),
      documents: ids.flatMap((id) =>
        ['p', 's'].map((kind) => ({
          sendingEventId: id,
          fileReference: `${id}-${kind}`,
          jobId: 'job_a',
          type: kind === 'p' ? 'DELIVERY_PROOF' : 'SUBMISSION_REPORT',
          name: 'proof.pdf',
          contentType: 'application/pdf',
          size: 10,
          path: `2026-11-21/rows/${id}-${kind}.pdf`,
          nextTryAt: 0,
        })),
      ),
      nextPollAt: 1e12,
      unchangedPolls: 0,
      done: true,
      changed: true,
    },
    5,
  );
  await store.recordPoll(
    {
      jobId: 'job_b',
      status: 'COMPLETED',
      jobJson: '{}',
      nextPollAt: 1e12,
      unchangedPolls: 0,
      done: true,
      changed: true,
    },
    5,
  );
  return store;
}

/** The whole document, built at once from every row (what the file held before it was streamed). */
const expected = async (store: ReturnsStore) => {
  const source = (await store.source(7))!;
  const jobs = [];
  for (const job of await store.jobsOfSource(source.itemId)) {
    const events = [];
    for (const event of await store.eventsOfJobPage(job.jobId, '', 1_000_000)) {
      events.push({ event, documents: await store.documentsOfEvent(event.id) });
    }
    jobs.push({ job, events });
  }
  return `${JSON.stringify(buildStatusDocument({ source, jobs }), null, 2)}\n`;
};
const collect = async (pieces: AsyncIterable<string>) => {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
};
const streamed = async (store: ReturnsStore) => collect(statusFileText(store, (await store.source(7))!));

describe('status file, streamed', () => {
  it('is byte for byte the pretty-printed document, across event pages and before and after every proof is written', async () => {
    const store = await storeWithEvents(1003);
    expect(await streamed(store)).toBe(await expected(store));
    expect(JSON.parse(await streamed(store)).final).toBe(false);
    for (const d of await store.dueDocuments(10, 10_000)) await store.markDocumentDone(d, undefined, 10);
    expect(JSON.parse(await streamed(store)).final).toBe(true);
    expect(await streamed(store)).toBe(await expected(store));
    await store.close();
  });

  it('writes a file of no events and a file of many through the output target the same way', async () => {
    for (const events of [0, 2, 600]) {
      const store = await storeWithEvents(events);
      const target = new LocalTarget(path.join(dir, `out-${events}`));
      expect(await writeStaleStatusFiles(store, target)).toBe(1);
      const source = (await store.source(7))!;
      expect(readFileSync(path.join(dir, `out-${events}`, source.statusPath), 'utf8')).toBe(
        await expected(store),
      );
      expect(await writeStaleStatusFiles(store, target)).toBe(0);
      await store.close();
      rmSync(path.join(dir, 'returns.sqlite'));
    }
  });
});

describe('daily CSV, streamed', () => {
  it('is the rendered CSV of every event final that day, in (final time, id) order across pages', async () => {
    const store = await storeWithEvents(1003, '2026-11-21');
    const all = await store.eventsFinalOnPage('2026-11-21', undefined, 1_000_000);
    expect(all).toHaveLength(1003);
    const entries = [];
    for (const e of all) entries.push({ ...e, documents: await store.documentsOfEvent(e.event.id) });
    const expectedCsv = renderCsv(entries);
    expect(await collect(dailyCsvText(store, '2026-11-21'))).toBe(expectedCsv);

    const target = new LocalTarget(path.join(dir, 'csv'));
    const progress: [number, number][] = [];
    const rows = await writeDailyCsv(
      store,
      target,
      '2026-11-21',
      Date.parse('2026-11-23T00:00:00Z'),
      (n, total) => progress.push([n, total]),
    );
    expect(rows).toBe(1003);
    expect(progress.at(-1)).toEqual([1003, 1003]);
    expect(readFileSync(path.join(dir, 'csv', 'statuses-2026-11-21.csv'), 'utf8')).toBe(expectedCsv);
    await store.close();
  });
});
