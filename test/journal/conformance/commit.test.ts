/**
 * Conformance: commitMove and flush, the moves the agent acts on next. However a backend makes
 * them durable (SQLite: group commit of the WAL, sqlite-durability.test.ts), each resolves with the
 * item as moved, refuses what transition refuses, and what resolved is there after a reopen.
 * Every backend (support/backends.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, sha256, UPLOAD_URL } from '../support/journal-harness.js';
import { codeOf } from '../support/steps.js';

describeEachBackend('commitMove and flush', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  async function creating(n: number): Promise<number> {
    const { item } = await journal.recordClaim(
      claimInput({ fileName: `f${n}.pdf`, sha256: sha256(`content ${n}`) }),
    );
    await journal.transition(item.id, 'validated');
    await journal.transition(item.id, 'creating');
    return item.id;
  }

  it('moves many items at once; each resolves with its new state, and all survive a reopen', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push(await creating(i));
    const moved = await Promise.all(
      ids.map((id, i) =>
        journal.commitMove(id, 'created', {
          jobId: `job-${i}`,
          uploadUrl: UPLOAD_URL,
          uploadDeadline: t.clock.now() + 7_200_000,
        }),
      ),
    );
    expect(moved.map((m) => [m.id, m.state, m.jobId])).toEqual(
      ids.map((id, i) => [id, 'created', `job-${i}`]),
    );
    const reopened = await t.reopen();
    expect(await Promise.all(ids.map(async (id) => (await reopened.get(id))?.jobId))).toEqual(
      ids.map((_, i) => `job-${i}`),
    );
    expect(await reopened.revealUploadUrl(ids[19]!)).toBe(UPLOAD_URL);
  });

  it('records the same move and history entry as transition', async () => {
    const id = await creating(1);
    t.clock.advance(1000);
    const moved = await journal.commitMove(id, 'rejected', {
      code: 'DOCEX_SOURCE_CHANGED',
      reason: 'changed',
    });
    expect(moved).toMatchObject({
      state: 'rejected',
      rejectCode: 'DOCEX_SOURCE_CHANGED',
      updatedAt: t.clock.now(),
    });
    expect((await journal.history(id)).at(-1)).toEqual({
      itemId: id,
      from: 'creating',
      to: 'rejected',
      at: t.clock.now(),
      detail: { code: 'DOCEX_SOURCE_CHANGED', reason: 'changed' },
    });
  });

  it('refuses an illegal move as transition does and leaves the item as it was', async () => {
    const id = await creating(1);
    const before = await journal.get(id);
    expect(await codeOf(journal.commitMove(id, 'uploaded', { md5: 'x' }))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(await codeOf(journal.commitMove(id, 'created', { jobId: 'j' }))).toBe('DOCEX_JOURNAL_FIELDS');
    expect(await codeOf(journal.commitMove(9999, 'validated'))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
    expect(await journal.get(id)).toEqual(before);
    expect(await journal.history(id)).toHaveLength(3);
  });

  it('flush resolves when nothing waits, and after moves of every kind, which a reopen then finds', async () => {
    await journal.flush();
    const id = await creating(2);
    await journal.flush();
    expect((await journal.get(id))?.state).toBe('creating');
    await journal.transition(id, 'created', { jobId: 'job-2', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 });
    await journal.flush();
    const reopened = await t.reopen();
    expect((await reopened.get(id))?.state).toBe('created');
  });
});
