/**
 * Journal pruning on a real SQLite file with a ManualClock: what goes (history, payload rows,
 * rejected drops), what stays (one row per done file, which duplicate detection reads), and the
 * batches the driver runs with a turn of the event loop between them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Journal } from '../../src/journal/journal.js';
import { pruneJournal } from '../../src/journal/prune.js';
import { claimInput, type JournalHarness, journalHarness } from './support/journal-harness.js';

const DAY = 86_400_000;
let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

function submit(fileName: string): number {
  const { item } = journal.recordClaim(claimInput({ fileName }));
  journal.transition(item.id, 'validated');
  journal.transition(item.id, 'creating');
  journal.transition(item.id, 'created', {
    jobId: `job-${item.id}`,
    uploadUrl: 'https://x/u?s=1',
    uploadDeadline: 1e15,
  });
  journal.transition(item.id, 'uploaded', { md5: 'm' });
  journal.transition(item.id, 'done');
  return item.id;
}

/** A payload file of two rows, both sent, the file done. */
function submitPayload(fileName: string): { file: number; rows: number[] } {
  const { item } = journal.recordClaim(claimInput({ fileName, mode: 'payload-word' }));
  journal.transition(item.id, 'validated');
  const rows = journal.addRows(item.id, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
  for (const row of rows) {
    journal.transition(row.id, 'creating');
    journal.transition(row.id, 'created', { jobId: `job-row-${row.id}` });
    journal.transition(row.id, 'done');
  }
  journal.transition(item.id, 'done');
  return { file: item.id, rows: rows.map((r) => r.id) };
}

describe('journal pruning', () => {
  it('still refuses a re-dropped file as a duplicate after its done item was pruned, naming the file and job', async () => {
    const first = submit('invoice-1.pdf');
    h.clock.advance(100 * DAY);
    const totals = await pruneJournal(journal, h.clock.now() - 90 * DAY);
    expect(totals.items).toBe(1);
    expect(journal.history(first)).toEqual([]);

    const again = journal.recordClaim(
      claimInput({ fileName: 'invoice-1.pdf', sourcePath: '/srv/erp/in/again/invoice-1.pdf' }),
    );
    expect(again.kind).toBe('duplicate');
    if (again.kind !== 'duplicate') return;
    expect(again.earlier).toMatchObject({ id: first, state: 'done', jobId: `job-${first}` });
    expect(again.item.rejectReason).toContain('invoice-1.pdf');
    expect(again.item.rejectReason).toContain(`job-${first}`);
  });

  it('prunes the history and payload rows of finished files last moved before the cutoff, drops old rejected files, and leaves newer and unfinished items alone', async () => {
    const oldDone = submit('old.pdf');
    const oldPayload = submitPayload('old.csv');
    const refused = journal.recordClaim(
      claimInput({ fileName: 'old.pdf', sourcePath: '/srv/erp/in/copy/old.pdf' }),
    );
    expect(refused.kind).toBe('duplicate');
    const stuck = journal.recordClaim(claimInput({ fileName: 'stuck.pdf' })).item.id;
    h.clock.advance(100 * DAY);
    const recent = submit('recent.pdf');

    const totals = await pruneJournal(journal, h.clock.now() - 90 * DAY);
    expect(totals).toMatchObject({ items: 3, rows: 2 });

    // Done files keep their row (duplicate detection), not their history or rows.
    expect(journal.get(oldDone)).toMatchObject({
      state: 'done',
      sha256: claimInput({ fileName: 'old.pdf' }).sha256,
    });
    expect(journal.history(oldDone)).toEqual([]);
    expect(journal.get(oldPayload.file)).toMatchObject({ state: 'done' });
    expect(journal.rowsOf(oldPayload.file)).toEqual([]);
    for (const row of oldPayload.rows) {
      expect(journal.get(row)).toBeUndefined();
      expect(journal.history(row)).toEqual([]);
    }
    // The rejected drop goes whole.
    expect(journal.get(refused.item.id)).toBeUndefined();
    // Newer items and unfinished ones (whatever their age) keep everything.
    expect(journal.history(recent).map((e) => e.to)).toEqual([
      'claimed',
      'validated',
      'creating',
      'created',
      'uploaded',
      'done',
    ]);
    expect(journal.get(stuck)).toMatchObject({ state: 'claimed' });
    expect(journal.history(stuck)).toHaveLength(1);
    expect(journal.stats()).toMatchObject({ files: { done: 3, claimed: 1, rejected: 0 }, unfinished: 1 });

    // A second pass finds nothing more; the kept state is on disk.
    expect(await pruneJournal(journal, h.clock.now() - 90 * DAY)).toMatchObject({
      items: 0,
      rows: 0,
      history: 0,
    });
    journal.close();
    journal = h.open();
    expect(journal.get(oldDone)).toMatchObject({ state: 'done' });
    expect(journal.get(refused.item.id)).toBeUndefined();
  });

  it('works through the ids in bounded batches with a pause between them, with the same result as one batch', async () => {
    const ids = Array.from({ length: 7 }, (_, i) => submit(`f-${i}.pdf`));
    h.clock.advance(100 * DAY);
    let pauses = 0;
    const totals = await pruneJournal(journal, h.clock.now() - 90 * DAY, {
      scanIds: 2,
      pause: async () => {
        pauses++;
      },
    });
    expect(totals).toMatchObject({ items: 7, batches: 4 });
    expect(pauses).toBe(3);
    for (const id of ids) expect(journal.history(id)).toEqual([]);
    expect(journal.pruneFinished(h.clock.now(), 0, 2)).toEqual({ items: 0, rows: 0, history: 0, next: 2 });
    expect(journal.pruneFinished(h.clock.now(), 6, 2)).toEqual({
      items: 0,
      rows: 0,
      history: 0,
      next: undefined,
    });
  });
});
