/**
 * Conformance: writers at once. Calls that overlap (one store's calls not awaited one by one, or
 * two stores on the same journal, as two agents on a shared database) must end as if they had run
 * one after another: one claim of a content, one winner of a contested move, no lost count.
 * Every backend (support/backends.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import type { RecordedClaim } from '../../../src/journal/types.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, UPLOAD_URL } from '../support/journal-harness.js';
import { errorCode, toCreated } from '../support/steps.js';

const N = 20;

function tally(results: readonly RecordedClaim[]) {
  return {
    claimed: results.filter((r) => r.kind === 'claimed').map((r) => r.item),
    duplicates: results.filter((r) => r.kind === 'duplicate'),
    inProgress: results.filter((r) => r.kind === 'in-progress').map((r) => r.item),
  };
}

/** Settles every call; answers the fulfilled values and the codes of the rejected ones. */
async function settle<T>(calls: Promise<T>[]): Promise<{ won: T[]; codes: string[] }> {
  const results = await Promise.allSettled(calls);
  return {
    won: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    codes: results.flatMap((r) => (r.status === 'rejected' ? [errorCode(r.reason)] : [])),
  };
}

describeEachBackend('journal writers at once', (backend) => {
  let t: JournalUnderTest;

  beforeEach(async () => {
    t = await backend.open();
    return () => t.cleanup();
  });

  it(`${N} claims of the same content at once through one store: exactly one claimed, ${N - 1} duplicates of it`, async () => {
    const journal = t.journal;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        journal.recordClaim(claimInput({ sourcePath: `/srv/erp/in/drop-${i}/invoice.pdf` })),
      ),
    );
    const { claimed, duplicates, inProgress } = tally(results);
    expect(claimed).toHaveLength(1);
    expect(duplicates).toHaveLength(N - 1);
    expect(inProgress).toHaveLength(0);
    for (const d of duplicates) {
      expect(d.earlier.id).toBe(claimed[0]!.id);
      expect(d.item).toMatchObject({
        state: 'rejected',
        rejectCode: 'DOCEX_DUPLICATE',
        duplicateOf: claimed[0]!.id,
      });
    }
    expect(new Set(results.map((r) => r.item.id)).size).toBe(N);
    expect(await journal.stats()).toMatchObject({ files: { claimed: 1, rejected: N - 1 }, unfinished: 1 });
  });

  it(`${N} claims of the very same file at once: one item, seen ${N - 1} times as in progress`, async () => {
    const journal = t.journal;
    const results = await Promise.all(Array.from({ length: N }, () => journal.recordClaim(claimInput())));
    const { claimed, duplicates, inProgress } = tally(results);
    expect(claimed).toHaveLength(1);
    expect(duplicates).toHaveLength(0);
    expect(inProgress.map((i) => i.id)).toEqual(Array.from({ length: N - 1 }, () => claimed[0]!.id));
    expect((await journal.stats()).files.claimed).toBe(1);
  });

  it('claims of the same content through two stores on the same journal: exactly one claimed', async () => {
    const one = t.journal;
    const two = await t.another();
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        (i % 2 === 0 ? one : two).recordClaim(
          claimInput({ sourcePath: `/srv/erp/in/drop-${i}/invoice.pdf` }),
        ),
      ),
    );
    const { claimed, duplicates } = tally(results);
    expect(claimed).toHaveLength(1);
    expect(duplicates).toHaveLength(N - 1);
    for (const d of duplicates) expect(d.earlier.id).toBe(claimed[0]!.id);
    expect((await two.stats()).files).toMatchObject({ claimed: 1, rejected: N - 1 });
  });

  it('two confirmations of the same upload at once: one wins, the other is refused with DOCEX_JOURNAL_TRANSITION', async () => {
    const journal = t.journal;
    const { item } = await journal.recordClaim(claimInput());
    await toCreated(journal, item.id, { uploadUrl: UPLOAD_URL });
    const { won, codes } = await settle([
      journal.transition(item.id, 'uploaded', { md5: 'md5-a' }),
      journal.transition(item.id, 'uploaded', { md5: 'md5-b' }),
    ]);
    expect(won).toHaveLength(1);
    expect(codes).toEqual(['DOCEX_JOURNAL_TRANSITION']);
    expect(won[0]).toMatchObject({ state: 'uploaded', hasUploadUrl: false });
    expect(['md5-a', 'md5-b']).toContain(won[0]!.uploadedMd5);
    expect(await journal.get(item.id)).toEqual(won[0]);
    expect((await journal.history(item.id)).filter((e) => e.to === 'uploaded')).toHaveLength(1);
  });

  it('the same contested move through two stores on the same journal: one wins, one DOCEX_JOURNAL_TRANSITION', async () => {
    const one = t.journal;
    const { item } = await one.recordClaim(claimInput());
    await toCreated(one, item.id, { uploadUrl: UPLOAD_URL });
    const two = await t.another();
    const { won, codes } = await settle([
      one.transition(item.id, 'uploaded', { md5: 'md5-a' }),
      two.transition(item.id, 'uploaded', { md5: 'md5-b' }),
    ]);
    expect(won).toHaveLength(1);
    expect(codes).toEqual(['DOCEX_JOURNAL_TRANSITION']);
    expect((await two.history(item.id)).filter((e) => e.to === 'uploaded')).toHaveLength(1);
  });

  it('competing moves of one item to different states at once: exactly one is recorded', async () => {
    const journal = t.journal;
    const { item } = await journal.recordClaim(claimInput());
    await toCreated(journal, item.id, { uploadUrl: UPLOAD_URL });
    const { won, codes } = await settle([
      journal.transition(item.id, 'uploaded', { md5: 'm' }),
      journal.transition(item.id, 'rejected', { code: 'DOCEX_SOURCE_CHANGED', reason: 'changed' }),
      journal.transition(item.id, 'creating', { note: 'window over' }),
    ]);
    // uploaded, rejected and creating are each legal from created, but only one can follow it;
    // rejected stays legal after creating, so two of three may win, never all three.
    const history = await journal.history(item.id);
    const after = history.slice(4).map((e) => [e.from, e.to]);
    expect(won.length + codes.length).toBe(3);
    expect(codes.every((c) => c === 'DOCEX_JOURNAL_TRANSITION')).toBe(true);
    expect(after).toHaveLength(won.length);
    expect(after[0]![0]).toBe('created');
    for (let i = 1; i < after.length; i++) expect(after[i]![0]).toBe(after[i - 1]![1]);
    expect((await journal.get(item.id))?.state).toBe(after.at(-1)![1]);
  });

  it('rows added twice at once: one set is recorded, the other refused with DOCEX_JOURNAL_ROWS', async () => {
    const journal = t.journal;
    const { item } = await journal.recordClaim(claimInput({ fileName: 'rows.csv', mode: 'payload-word' }));
    await journal.transition(item.id, 'validated');
    const { won, codes } = await settle([
      journal.addRows(item.id, [{ rowIndex: 0 }, { rowIndex: 1 }]),
      journal.addRows(item.id, [{ rowIndex: 0 }, { rowIndex: 1 }, { rowIndex: 2 }]),
    ]);
    expect(won).toHaveLength(1);
    expect(codes).toEqual(['DOCEX_JOURNAL_ROWS']);
    expect(await journal.rowsOf(item.id)).toEqual(won[0]);
  });

  it(`${N} failed tries of one item recorded at once are all counted`, async () => {
    const journal = t.journal;
    const { item } = await journal.recordClaim(claimInput());
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 1000 + i }),
      ),
    );
    expect((await journal.get(item.id))?.failedTries).toBe(N);
  });

  it(`lost answers counted by overlapping moves of ${N} items are all kept, each on its item`, async () => {
    const journal = t.journal;
    const ids: number[] = [];
    for (let i = 0; i < N; i++) {
      const { item } = await journal.recordClaim(claimInput({ fileName: `f-${i}.pdf` }));
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      ids.push(item.id);
    }
    await Promise.all(ids.map((id) => journal.transition(id, 'creating', { lostAnswer: 'orphan' })));
    const items = await Promise.all(ids.map((id) => journal.get(id)));
    expect(items.map((i) => [i?.attempt, i?.lostAnswers, i?.orphanJobs])).toEqual(ids.map(() => [2, 1, 1]));
  });
});
