import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Journal, ReadOnlyJournal } from '../../src/journal/index.js';
import { claimInput, type JournalHarness, journalHarness, sha256 } from './support/journal-harness.js';

let h: JournalHarness | undefined;
let reader: ReadOnlyJournal | undefined;
afterEach(() => {
  reader?.close();
  reader = undefined;
  h?.cleanup();
  h = undefined;
});

function claimed(
  journal: Journal,
  fileName: string,
  overrides: Parameters<typeof claimInput>[0] = {},
): number {
  const result = journal.recordClaim(claimInput({ fileName, sha256: sha256(fileName), ...overrides }));
  if (result.kind !== 'claimed') throw new Error(`${fileName} was not claimed`);
  return result.item.id;
}

/** claimed (or validated) → done through a job without upload (payload-word). */
function doneWithJob(journal: Journal, id: number, jobId: string, validated = false): void {
  if (!validated) journal.transition(id, 'validated');
  journal.transition(id, 'creating');
  journal.transition(id, 'created', { jobId });
  journal.transition(id, 'done');
}

describe('the journal read API', () => {
  it('feeds the items done with a job in the order their done was recorded, a payload row with its file as source', () => {
    h = journalHarness();
    const journal = h.open();
    const first = claimed(journal, 'first.docx', { mode: 'payload-word' });
    const batch = claimed(journal, 'batch.csv', { mode: 'payload-word' });
    journal.transition(batch, 'validated');
    const [row0, row1] = journal.addRows(batch, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
    h.clock.advance(1_000);
    // The row made later finishes first: the feed follows the done entries, not the item ids.
    doneWithJob(journal, row1!.id, 'job-row1', true);
    doneWithJob(journal, first, 'job-first');
    doneWithJob(journal, row0!.id, 'job-row0', true);
    journal.transition(batch, 'done');

    reader = ReadOnlyJournal.open(h.file, { busyTimeoutMs: 1000 });
    const done = reader.doneJobsAfter(0, 10);
    expect(done.map((d) => d.jobId)).toEqual(['job-row1', 'job-first', 'job-row0']);
    expect(done[2]).toMatchObject({
      itemId: row0!.id,
      rowIndex: 0,
      label: 'C-1',
      jobName: journal.get(row0!.id)!.jobName,
      doneAt: h.clock.now(),
      source: { itemId: batch, folder: 'invoices', fileName: 'batch.csv', sha256: sha256('batch.csv') },
    });
    expect(done[2]!.jobName).toBeDefined();
    expect(done[1]!.source).toMatchObject({ itemId: first, fileName: 'first.docx' });
    // The cursor is the history entry: what comes after the first answer is the rest, then nothing.
    expect(reader.doneJobsAfter(done[0]!.cursor, 10).map((d) => d.jobId)).toEqual(['job-first', 'job-row0']);
    expect(reader.doneJobsAfter(done[2]!.cursor, 10)).toEqual([]);
    expect(reader.doneJobsAfter(0, 1).map((d) => d.jobId)).toEqual(['job-row1']);
  });

  it('reads the history after a cursor in chunks, each entry with its item kind, folder and refusal code', () => {
    h = journalHarness();
    const journal = h.open();
    const kept = claimed(journal, 'kept.pdf');
    const refused = claimed(journal, 'refused.pdf', { folder: 'orders' });
    journal.transition(kept, 'validated');
    journal.transition(refused, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });

    reader = ReadOnlyJournal.open(h.file, { busyTimeoutMs: 1000 });
    const all = reader.historyAfter(0, 100);
    expect(all.map(({ from, to, folder }) => [from, to, folder])).toEqual([
      [undefined, 'claimed', 'invoices'],
      [undefined, 'claimed', 'orders'],
      ['claimed', 'validated', 'invoices'],
      ['claimed', 'rejected', 'orders'],
    ]);
    expect(all[3]).toMatchObject({ kind: 'file', rejectCode: 'DOCEX_INPUT_EMPTY' });
    expect(all[0]!.rejectCode).toBeUndefined();
    const firstTwo = reader.historyAfter(0, 2);
    expect(firstTwo).toEqual(all.slice(0, 2));
    expect(reader.historyAfter(firstTwo[1]!.id, 100)).toEqual(all.slice(2));
  });

  it('lists the files not finished by folder and state, and those claimed at or before a cutoff', () => {
    h = journalHarness();
    const journal = h.open();
    const old = claimed(journal, 'old.pdf');
    const claimedAt = h.clock.now();
    h.clock.advance(60_000);
    claimed(journal, 'new.pdf');
    const finished = claimed(journal, 'finished.docx', { mode: 'payload-word' });
    doneWithJob(journal, finished, 'job-finished');
    journal.transition(old, 'validated');

    reader = ReadOnlyJournal.open(h.file, { busyTimeoutMs: 1000 });
    expect(reader.waiting()).toEqual(
      expect.arrayContaining([
        { folder: 'invoices', state: 'claimed', count: 1, oldestAt: claimedAt + 60_000 },
        { folder: 'invoices', state: 'validated', count: 1, oldestAt: claimedAt },
      ]),
    );
    expect(reader.waiting()).toHaveLength(2);
    expect(reader.unfinishedSince(claimedAt, 10)).toEqual([
      { id: old, folder: 'invoices', fileName: 'old.pdf', state: 'validated', claimedAt, jobId: undefined },
    ]);
    expect(reader.unfinishedSince(h.clock.now(), 10).map((f) => f.fileName)).toEqual(['old.pdf', 'new.pdf']);
    expect(reader.unfinishedSince(h.clock.now(), 1)).toHaveLength(1);
  });

  it('finds file items by bare name, by content, and by content where they were placed, newest first', () => {
    h = journalHarness();
    const journal = h.open();
    const same = sha256('same bytes');
    const a = claimed(journal, 'a.pdf', { sha256: same, allowDuplicates: true });
    const b = claimed(journal, 'b.pdf', { sha256: same, allowDuplicates: true, folder: 'orders' });
    journal.transition(a, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    const again = claimed(journal, 'a.pdf', { sha256: sha256('other bytes') });

    reader = ReadOnlyJournal.open(h.file, { busyTimeoutMs: 1000 });
    expect(reader.fileItemIds({ fileName: 'a.pdf' }, 10)).toEqual([again, a]);
    expect(reader.fileItemIds({ fileName: 'a.pdf' }, 1)).toEqual([again]);
    expect(reader.fileItemIds({ sha256: same }, 10)).toEqual([b, a]);
    expect(reader.fileItemIds({ sha256: same, placed: { folder: 'orders', fileName: 'b.pdf' } }, 10)).toEqual(
      [b],
    );
    expect(reader.fileItemIds({ sha256: same, placed: { folder: 'orders', fileName: 'a.pdf' } }, 10)).toEqual(
      [],
    );
  });

  it('refuses to open a journal that does not exist rather than creating one', () => {
    h = journalHarness();
    const missing = path.join(h.dir, 'no-journal.sqlite');
    expect(() => ReadOnlyJournal.open(missing, { busyTimeoutMs: 1000 })).toThrow();
  });
});
