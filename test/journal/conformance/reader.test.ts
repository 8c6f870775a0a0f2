/**
 * Conformance: the journal's read API (JournalReader) beside a writing store: the return path's
 * feed of done jobs, the history chunks the ops totals sum, upload windows, waiting files, the
 * status command's look-ups. Every backend (support/backends.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { sha256, UPLOAD_URL } from '../support/journal-harness.js';
import { claimedFile } from '../support/steps.js';

describeEachBackend('the journal read API', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  async function claimed(fileName: string, overrides: Parameters<typeof claimedFile>[2] = {}) {
    return (await claimedFile(journal, fileName, overrides)).id;
  }

  /** claimed (or validated) → done through a job without upload (payload-word). */
  async function doneWithJob(id: number, jobId: string, validated = false): Promise<void> {
    if (!validated) await journal.transition(id, 'validated');
    await journal.transition(id, 'creating');
    await journal.transition(id, 'created', { jobId });
    await journal.transition(id, 'done');
  }

  it('feeds the items done with a job in the order their done was recorded, a payload row with its file (and where it was dropped) as source', async () => {
    const first = await claimed('first.docx', { mode: 'payload-word' });
    const batchClaimedAt = t.clock.now();
    const batch = await claimed('batch.csv', { mode: 'payload-word', relativePath: 'acme/batch.csv' });
    await journal.transition(batch, 'validated');
    const [row0, row1] = await journal.addRows(batch, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
    t.clock.advance(1_000);
    // The row made later finishes first: the feed follows the done entries, not the item ids.
    await doneWithJob(row1!.id, 'job-row1', true);
    await doneWithJob(first, 'job-first');
    t.clock.advance(1_000);
    await doneWithJob(row0!.id, 'job-row0', true);
    await journal.transition(batch, 'done');
    // A refusal is not a done job; neither is a file whose rows carry the jobs.
    const refused = await claimed('refused.docx', { mode: 'payload-word' });
    await journal.transition(refused, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });

    const reader = await t.reader();
    const done = await reader.doneJobsAfter(0, 10);
    expect(done.map((d) => d.jobId)).toEqual(['job-row1', 'job-first', 'job-row0']);
    expect(done[2]).toEqual({
      cursor: done[2]!.cursor,
      itemId: row0!.id,
      rowIndex: 0,
      label: 'C-1',
      jobId: 'job-row0',
      jobName: (await journal.get(row0!.id))!.jobName,
      doneAt: t.clock.now(),
      source: {
        itemId: batch,
        folder: 'invoices',
        fileName: 'batch.csv',
        // Where it was dropped, and its path relative to the drop folder recorded at its claim (its
        // status and proofs keep the sub-path; an earlier agent's item has it read from sourcePath).
        sourcePath: '/srv/erp/in/batch.csv',
        relativePath: 'acme/batch.csv',
        sha256: sha256('batch.csv'),
        claimedAt: batchClaimedAt,
      },
    });
    expect(done[2]!.jobName).toMatch(/-r0$/);
    expect(done[1]).toMatchObject({
      itemId: first,
      rowIndex: undefined,
      label: undefined,
      doneAt: t.clock.now() - 1_000,
      source: { itemId: first, fileName: 'first.docx', sha256: sha256('first.docx') },
    });
    expect(done[1]!.source.relativePath).toBeUndefined();
    expect(done[0]!.cursor).toBeLessThan(done[1]!.cursor);
    expect(done[1]!.cursor).toBeLessThan(done[2]!.cursor);
    // The cursor is the history entry: what comes after the first answer is the rest, then nothing.
    expect((await reader.doneJobsAfter(done[0]!.cursor, 10)).map((d) => d.jobId)).toEqual([
      'job-first',
      'job-row0',
    ]);
    expect(await reader.doneJobsAfter(done[2]!.cursor, 10)).toEqual([]);
    expect((await reader.doneJobsAfter(0, 1)).map((d) => d.jobId)).toEqual(['job-row1']);
  });

  it('sees what the store commits after it opened', async () => {
    const reader = await t.reader();
    expect(await reader.doneJobsAfter(0, 10)).toEqual([]);
    const id = await claimed('later.docx', { mode: 'payload-word' });
    expect((await reader.get(id))?.state).toBe('claimed');
    await doneWithJob(id, 'job-later');
    expect((await reader.doneJobsAfter(0, 10)).map((d) => d.jobId)).toEqual(['job-later']);
    expect((await reader.get(id))?.state).toBe('done');
  });

  it('reads the history after a cursor in chunks, each entry with its item kind, folder and refusal code', async () => {
    const kept = await claimed('kept.pdf');
    const refused = await claimed('refused.pdf', { folder: 'orders' });
    await journal.transition(kept, 'validated');
    await journal.transition(refused, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    const payload = await claimed('p.csv', { mode: 'payload-word' });
    await journal.transition(payload, 'validated');
    await journal.addRows(payload, [{ rowIndex: 0 }]);

    const reader = await t.reader();
    const all = await reader.historyAfter(0, 100);
    expect(all.map(({ from, to, folder, kind }) => [from, to, folder, kind])).toEqual([
      [undefined, 'claimed', 'invoices', 'file'],
      [undefined, 'claimed', 'orders', 'file'],
      ['claimed', 'validated', 'invoices', 'file'],
      ['claimed', 'rejected', 'orders', 'file'],
      [undefined, 'claimed', 'invoices', 'file'],
      ['claimed', 'validated', 'invoices', 'file'],
      [undefined, 'validated', 'invoices', 'row'],
    ]);
    expect(all[3]).toMatchObject({ kind: 'file', rejectCode: 'DOCEX_INPUT_EMPTY' });
    expect(all[0]!.rejectCode).toBeUndefined();
    expect(new Set(all.map((s) => s.id)).size).toBe(all.length);
    const firstTwo = await reader.historyAfter(0, 2);
    expect(firstTwo).toEqual(all.slice(0, 2));
    expect(await reader.historyAfter(firstTwo[1]!.id, 100)).toEqual(all.slice(2));
    expect(await reader.historyAfter(all.at(-1)!.id, 100)).toEqual([]);
  });

  it('counts the history in the journal by folder, kind, move and refusal code, a range of ids at a time', async () => {
    const kept = await claimed('kept.pdf');
    const refused = await claimed('refused.pdf', { folder: 'orders' });
    const second = await claimed('second.pdf', { folder: 'orders' });
    await journal.transition(kept, 'validated');
    await journal.transition(refused, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    await journal.transition(second, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    const reader = await t.reader();
    const all = await reader.historyAfter(0, 100);
    const key = (s: {
      folder: string;
      kind: string;
      from: string | undefined;
      to: string;
      rejectCode: string | undefined;
    }) => [s.folder, s.kind, s.from ?? '-', s.to, s.rejectCode ?? '-'].join(' ');
    // As many entries of each kind as historyAfter lists, over any split of the ids.
    const listed = new Map<string, number>();
    for (const step of all) listed.set(key(step), (listed.get(key(step)) ?? 0) + 1);
    for (const span of [2, 100]) {
      const counted = new Map<string, number>();
      let cursor = 0;
      for (;;) {
        const { upTo, tallies } = await reader.historyTally(cursor, span);
        for (const tally of tallies) counted.set(key(tally), (counted.get(key(tally)) ?? 0) + tally.entries);
        if (upTo === cursor) break;
        expect(upTo - cursor).toBeLessThanOrEqual(span);
        cursor = upTo;
      }
      expect(cursor).toBe(all.at(-1)!.id);
      expect(counted).toEqual(listed);
    }
    expect(listed.get('orders file claimed rejected DOCEX_INPUT_EMPTY')).toBe(2);
    expect(await reader.historyTally(all.at(-1)!.id, 100)).toEqual({ upTo: all.at(-1)!.id, tallies: [] });
  });

  it('lists the jobs waiting for their upload, soonest deadline first, with when their window opened', async () => {
    const late = await claimed('late.pdf');
    await journal.transition(late, 'validated');
    await journal.transition(late, 'creating');
    const lateOpened = t.clock.now();
    await journal.transition(late, 'created', {
      jobId: 'job-late',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: lateOpened + 7_200_000,
    });
    t.clock.advance(60_000);
    const soon = await claimed('soon.pdf');
    await journal.transition(soon, 'validated');
    await journal.transition(soon, 'creating');
    await journal.transition(soon, 'created', {
      jobId: 'job-soon',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: lateOpened + 3_600_000,
    });
    // Confirmed uploads and jobs without an upload step do not wait.
    const up = await claimed('up.pdf');
    await journal.transition(up, 'validated');
    await journal.transition(up, 'creating');
    await journal.transition(up, 'created', { jobId: 'job-up', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 });
    await journal.transition(up, 'uploaded', { md5: 'm' });
    const word = await claimed('w.docx', { mode: 'payload-word' });
    await journal.transition(word, 'validated');
    await journal.transition(word, 'creating');
    await journal.transition(word, 'created', { jobId: 'job-w' });

    const reader = await t.reader();
    expect(await reader.pendingUploads()).toEqual([
      {
        itemId: soon,
        folder: 'invoices',
        fileName: 'soon.pdf',
        openedAt: lateOpened + 60_000,
        deadline: lateOpened + 3_600_000,
      },
      {
        itemId: late,
        folder: 'invoices',
        fileName: 'late.pdf',
        openedAt: lateOpened,
        deadline: lateOpened + 7_200_000,
      },
    ]);
  });

  it('lists the files not finished by folder and state, and those claimed at or before a cutoff', async () => {
    const old = await claimed('old.pdf');
    const claimedAt = t.clock.now();
    t.clock.advance(60_000);
    await claimed('new.pdf');
    await claimed('other.pdf', { folder: 'orders', workflowId: 'wf-orders' });
    const finished = await claimed('finished.docx', { mode: 'payload-word' });
    await doneWithJob(finished, 'job-finished');
    await journal.transition(old, 'validated');
    // Payload rows are not files.
    const rows = await claimed('rows.csv', { mode: 'payload-word' });
    await journal.transition(rows, 'validated');
    await journal.addRows(rows, [{ rowIndex: 0 }]);

    const reader = await t.reader();
    const waiting = await reader.waiting();
    expect(waiting).toEqual(
      expect.arrayContaining([
        { folder: 'invoices', state: 'claimed', count: 1, oldestAt: claimedAt + 60_000 },
        { folder: 'invoices', state: 'validated', count: 2, oldestAt: claimedAt },
        { folder: 'orders', state: 'claimed', count: 1, oldestAt: claimedAt + 60_000 },
      ]),
    );
    expect(waiting).toHaveLength(3);
    expect(await reader.unfinishedSince(claimedAt, 10)).toEqual([
      { id: old, folder: 'invoices', fileName: 'old.pdf', state: 'validated', claimedAt, jobId: undefined },
    ]);
    expect((await reader.unfinishedSince(t.clock.now(), 10)).map((f) => f.fileName)).toEqual([
      'old.pdf',
      'new.pdf',
      'other.pdf',
      'rows.csv',
    ]);
    expect((await reader.unfinishedSince(t.clock.now(), 1)).map((f) => f.fileName)).toEqual(['old.pdf']);
    expect(await reader.unfinishedSince(claimedAt - 1, 10)).toEqual([]);
  });

  it('finds file items by bare name, by content, and by content where they were placed, newest first', async () => {
    const same = sha256('same bytes');
    const a = await claimed('a.pdf', { sha256: same, allowDuplicates: true });
    const b = await claimed('b.pdf', { sha256: same, allowDuplicates: true, folder: 'orders' });
    await journal.transition(a, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    const again = await claimed('a.pdf', { sha256: sha256('other bytes') });
    await journal.transition(b, 'validated');
    await journal.addRows(b, [{ rowIndex: 0 }]); // a row shares its file's name and content, and is not a file

    const reader = await t.reader();
    expect(await reader.fileItemIds({ fileName: 'a.pdf' }, 10)).toEqual([again, a]);
    expect(await reader.fileItemIds({ fileName: 'a.pdf' }, 1)).toEqual([again]);
    expect(await reader.fileItemIds({ fileName: 'b.pdf' }, 10)).toEqual([b]);
    expect(await reader.fileItemIds({ sha256: same }, 10)).toEqual([b, a]);
    expect(
      await reader.fileItemIds({ sha256: same, placed: { folder: 'orders', fileName: 'b.pdf' } }, 10),
    ).toEqual([b]);
    expect(
      await reader.fileItemIds({ sha256: same, placed: { folder: 'orders', fileName: 'a.pdf' } }, 10),
    ).toEqual([]);
    expect(await reader.fileItemIds({ fileName: 'none.pdf' }, 10)).toEqual([]);
  });

  it('answers items, look-ups and history as the store does', async () => {
    const id = await claimed('x.pdf');
    await journal.transition(id, 'validated');
    await journal.transition(id, 'creating');
    await journal.transition(id, 'created', { jobId: 'job-x', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 });
    await journal.recordFailedTry(id, { code: 'DOCEX_API_503', nextTryAt: t.clock.now() + 5000 });
    const item = await journal.get(id);

    const reader = await t.reader();
    expect(await reader.get(id)).toEqual(item);
    expect(await reader.get(9999)).toBeUndefined();
    expect(await reader.byJobId('job-x')).toEqual(item);
    expect(await reader.byJobId('none')).toBeUndefined();
    expect(await reader.byPath(item!.sourcePath!)).toEqual(await journal.byPath(item!.sourcePath!));
    expect(await reader.byPath(item!.claimedPath!)).toEqual([item]);
    expect(await reader.history(id)).toEqual(await journal.history(id));
    expect((await reader.history(id)).map((e) => e.to)).toEqual([
      'claimed',
      'validated',
      'creating',
      'created',
    ]);
  });
});
