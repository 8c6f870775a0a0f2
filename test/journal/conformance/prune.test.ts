/**
 * Conformance: pruning with a ManualClock. What goes (history, payload rows, rejected drops), what
 * stays (one row per done file, which duplicate detection reads), and the batches pruneJournal
 * runs with a pause between them. Every backend (support/backends.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import { pruneJournal } from '../../../src/journal/prune.js';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput } from '../support/journal-harness.js';
import { toDone } from '../support/steps.js';

const DAY = 86_400_000;

describeEachBackend('journal pruning', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  async function submit(fileName: string): Promise<number> {
    const { item } = await journal.recordClaim(claimInput({ fileName }));
    await toDone(journal, item.id);
    return item.id;
  }

  /** A payload file of two rows, both sent, the file done. */
  async function submitPayload(fileName: string): Promise<{ file: number; rows: number[] }> {
    const { item } = await journal.recordClaim(claimInput({ fileName, mode: 'payload-word' }));
    await journal.transition(item.id, 'validated');
    const rows = await journal.addRows(item.id, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
    for (const row of rows) {
      await journal.transition(row.id, 'creating');
      await journal.transition(row.id, 'created', { jobId: `job-row-${row.id}` });
      await journal.transition(row.id, 'done');
    }
    await journal.transition(item.id, 'done');
    return { file: item.id, rows: rows.map((r) => r.id) };
  }

  it('still refuses a re-dropped file as a duplicate after its done item was pruned, naming the file and job', async () => {
    const first = await submit('invoice-1.pdf');
    t.clock.advance(100 * DAY);
    const totals = await pruneJournal(journal, t.clock.now() - 90 * DAY);
    expect(totals).toMatchObject({ items: 1, rows: 0, history: 6 });
    expect(await journal.history(first)).toEqual([]);

    const again = await journal.recordClaim(
      claimInput({ fileName: 'invoice-1.pdf', sourcePath: '/srv/erp/in/again/invoice-1.pdf' }),
    );
    expect(again.kind).toBe('duplicate');
    if (again.kind !== 'duplicate') return;
    expect(again.earlier).toMatchObject({ id: first, state: 'done', jobId: `job-${first}` });
    expect(again.item.rejectReason).toContain('invoice-1.pdf');
    expect(again.item.rejectReason).toContain(`job-${first}`);
  });

  it('prunes the history and payload rows of finished files last moved before the cutoff, drops old rejected files, and leaves newer and unfinished items alone', async () => {
    const oldDone = await submit('old.pdf');
    const oldPayload = await submitPayload('old.csv');
    const refused = await journal.recordClaim(
      claimInput({ fileName: 'old.pdf', sourcePath: '/srv/erp/in/copy/old.pdf' }),
    );
    expect(refused.kind).toBe('duplicate');
    const stuck = (await journal.recordClaim(claimInput({ fileName: 'stuck.pdf' }))).item.id;
    t.clock.advance(100 * DAY);
    const recent = await submit('recent.pdf');

    // old.pdf: 6 entries; old.csv: 3 for the file, 4 for each row; the refused copy: 1.
    const totals = await pruneJournal(journal, t.clock.now() - 90 * DAY);
    expect(totals).toMatchObject({ items: 3, rows: 2, history: 6 + 3 + 8 + 1 });

    // Done files keep their row (duplicate detection), not their history or rows.
    expect(await journal.get(oldDone)).toMatchObject({
      state: 'done',
      jobId: `job-${oldDone}`,
      sha256: claimInput({ fileName: 'old.pdf' }).sha256,
    });
    expect(await journal.history(oldDone)).toEqual([]);
    expect(await journal.get(oldPayload.file)).toMatchObject({ state: 'done' });
    expect(await journal.history(oldPayload.file)).toEqual([]);
    expect(await journal.rowsOf(oldPayload.file)).toEqual([]);
    for (const row of oldPayload.rows) {
      expect(await journal.get(row)).toBeUndefined();
      expect(await journal.history(row)).toEqual([]);
    }
    expect(await journal.byJobId(`job-row-${oldPayload.rows[0]}`)).toBeUndefined();
    // The rejected drop goes whole.
    expect(await journal.get(refused.item.id)).toBeUndefined();
    expect(await journal.history(refused.item.id)).toEqual([]);
    // Newer items and unfinished ones (whatever their age) keep everything.
    expect((await journal.history(recent)).map((e) => e.to)).toEqual([
      'claimed',
      'validated',
      'creating',
      'created',
      'uploaded',
      'done',
    ]);
    expect(await journal.get(stuck)).toMatchObject({ state: 'claimed' });
    expect(await journal.history(stuck)).toHaveLength(1);
    expect(await journal.stats()).toMatchObject({
      files: { done: 3, claimed: 1, rejected: 0 },
      rows: { done: 0 },
      unfinished: 1,
    });

    // A second pass finds nothing more; the kept state is still there after a reopen.
    expect(await pruneJournal(journal, t.clock.now() - 90 * DAY)).toMatchObject({
      items: 0,
      rows: 0,
      history: 0,
    });
    journal = await t.reopen();
    expect(await journal.get(oldDone)).toMatchObject({ state: 'done' });
    expect(await journal.get(refused.item.id)).toBeUndefined();
    expect(await journal.history(oldDone)).toEqual([]);
  });

  it('keeps a finished file last moved at or after the cutoff', async () => {
    const id = await submit('edge.pdf');
    const movedAt = t.clock.now();
    t.clock.advance(100 * DAY);
    expect(await pruneJournal(journal, movedAt)).toMatchObject({ items: 0, history: 0 });
    expect(await journal.history(id)).toHaveLength(6);
    expect(await pruneJournal(journal, movedAt + 1)).toMatchObject({ items: 1, history: 6 });
  });

  it('works through the ids in bounded batches with a pause between them, with the same result as one batch', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push(await submit(`f-${i}.pdf`));
    const first = ids[0]! - 1;
    t.clock.advance(100 * DAY);
    let pauses = 0;
    const totals = await pruneJournal(journal, t.clock.now() - 90 * DAY, {
      scanIds: 2,
      pause: async () => {
        pauses++;
      },
    });
    expect(totals).toMatchObject({ items: 7, history: 42, batches: 4 });
    expect(pauses).toBe(3);
    for (const id of ids) expect(await journal.history(id)).toEqual([]);
    expect(await journal.pruneFinished(t.clock.now(), first, 2)).toEqual({
      items: 0,
      rows: 0,
      history: 0,
      next: first + 2,
    });
    expect(await journal.pruneFinished(t.clock.now(), first + 6, 2)).toEqual({
      items: 0,
      rows: 0,
      history: 0,
      next: undefined,
    });
  });

  it('one batch prunes only the ids in its range and says where to go on', async () => {
    const a = await submit('a.pdf');
    const b = await submit('b.pdf');
    t.clock.advance(100 * DAY);
    const batch = await journal.pruneFinished(t.clock.now(), a - 1, 1);
    expect(batch).toEqual({ items: 1, rows: 0, history: 6, next: a });
    expect(await journal.history(a)).toEqual([]);
    expect(await journal.history(b)).toHaveLength(6);
    expect(await journal.pruneFinished(t.clock.now(), a, 1)).toEqual({
      items: 1,
      rows: 0,
      history: 6,
      next: undefined,
    });
  });
});
