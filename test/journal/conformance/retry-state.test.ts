/**
 * Conformance: the retry state kept on an item (failed tries in a row, when the next try is due,
 * the last failure's code) and the counts of lost create answers a move records. Both must survive
 * a restart. Every backend (support/backends.ts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { UPLOAD_URL } from '../support/journal-harness.js';
import { claimed, claimedFile, codeOf } from '../support/steps.js';

describeEachBackend('journal retry state', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  describe('failed tries', () => {
    it('recordFailedTry counts up, records the code and when the next try is due, and answers the item', async () => {
      const item = await claimed(journal);
      const first = await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 1_000 });
      expect(first).toEqual({
        ...item,
        failedTries: 1,
        nextTryAt: 1_000,
        lastFailureCode: 'DOCEX_API_503',
      });
      const second = await journal.recordFailedTry(item.id, { code: 'DOCEX_NETWORK', nextTryAt: 5_000 });
      expect(second).toMatchObject({ failedTries: 2, nextTryAt: 5_000, lastFailureCode: 'DOCEX_NETWORK' });
      expect(await journal.get(item.id)).toEqual(second);
      // Not a move: no history entry, the state stays.
      expect(await journal.history(item.id)).toHaveLength(1);
      expect(second.state).toBe('claimed');
    });

    it('recordFailedTry with counted false records the code and the next try but leaves the count as it was', async () => {
      const item = await claimed(journal);
      await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 1_000 });
      const held = await journal.recordFailedTry(item.id, {
        code: 'DOCEX_SEND_WINDOW_CLOSED',
        nextTryAt: 9_000,
        counted: false,
      });
      expect(held).toMatchObject({
        failedTries: 1,
        nextTryAt: 9_000,
        lastFailureCode: 'DOCEX_SEND_WINDOW_CLOSED',
      });
      expect(await journal.get(item.id)).toEqual(held);
    });

    it('keeps each item its own count', async () => {
      const a = await claimedFile(journal, 'a.pdf');
      const b = await claimedFile(journal, 'b.pdf');
      await journal.recordFailedTry(a.id, { code: 'DOCEX_API_503', nextTryAt: 1_000 });
      await journal.recordFailedTry(a.id, { code: 'DOCEX_API_503', nextTryAt: 2_000 });
      await journal.recordFailedTry(b.id, { code: 'DOCEX_NETWORK', nextTryAt: 3_000 });
      expect(await journal.get(a.id)).toMatchObject({ failedTries: 2, nextTryAt: 2_000 });
      expect(await journal.get(b.id)).toMatchObject({ failedTries: 1, nextTryAt: 3_000 });
    });

    it('clearFailedTries starts the count again and leaves no try waiting; the last code stays for status', async () => {
      const item = await claimed(journal);
      await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 1_000 });
      await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 2_000 });
      await journal.clearFailedTries(item.id);
      expect(await journal.get(item.id)).toMatchObject({
        failedTries: 0,
        nextTryAt: undefined,
        lastFailureCode: 'DOCEX_API_503',
        state: 'claimed',
      });
      expect(await journal.history(item.id)).toHaveLength(1);
      // Counting starts from zero again.
      expect(
        (await journal.recordFailedTry(item.id, { code: 'DOCEX_NETWORK', nextTryAt: 3_000 })).failedTries,
      ).toBe(1);
    });

    it('a move leaves the retry state as it was (the caller clears it)', async () => {
      const item = await claimed(journal);
      await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: 1_000 });
      const moved = await journal.transition(item.id, 'validated');
      expect(moved).toMatchObject({ failedTries: 1, nextTryAt: 1_000, lastFailureCode: 'DOCEX_API_503' });
    });

    it('recording a failed try of an item it does not have is refused with DOCEX_JOURNAL_UNKNOWN_ITEM', async () => {
      expect(await codeOf(journal.recordFailedTry(9999, { code: 'DOCEX_API_503', nextTryAt: 1 }))).toBe(
        'DOCEX_JOURNAL_UNKNOWN_ITEM',
      );
    });

    it('survives reopening the journal, as does a cleared count', async () => {
      const a = await claimedFile(journal, 'a.pdf');
      const b = await claimedFile(journal, 'b.pdf');
      const due = t.clock.now() + 30_000;
      await journal.recordFailedTry(a.id, { code: 'DOCEX_API_503', nextTryAt: due - 1 });
      await journal.recordFailedTry(a.id, { code: 'DOCEX_API_429', nextTryAt: due });
      await journal.recordFailedTry(b.id, { code: 'DOCEX_NETWORK', nextTryAt: due });
      await journal.clearFailedTries(b.id);
      const reopened = await t.reopen();
      expect(await reopened.get(a.id)).toMatchObject({
        failedTries: 2,
        nextTryAt: due,
        lastFailureCode: 'DOCEX_API_429',
      });
      expect(await reopened.get(b.id)).toMatchObject({
        failedTries: 0,
        nextTryAt: undefined,
        lastFailureCode: 'DOCEX_NETWORK',
      });
      // The recovery plan hands the retry state to the restart.
      const plan = await reopened.recoveryPlan();
      expect(plan.find((s) => s.item.id === a.id)?.item).toMatchObject({ failedTries: 2, nextTryAt: due });
    });
  });

  describe('lost create answers', () => {
    async function creating(name = 'lost.pdf') {
      const item = await claimedFile(journal, name);
      await journal.transition(item.id, 'validated');
      return journal.transition(item.id, 'creating');
    }

    it("'orphan' counts a lost answer and an orphan job, in the move that records the new attempt", async () => {
      const item = await creating();
      const next = await journal.transition(item.id, 'creating', {
        lostAnswer: 'orphan',
        note: 'orphan job job-7: its create answer was lost',
      });
      expect(next).toMatchObject({ state: 'creating', attempt: 2, lostAnswers: 1, orphanJobs: 1 });
      const again = await journal.transition(item.id, 'creating', { lostAnswer: 'orphan' });
      expect(again).toMatchObject({ attempt: 3, lostAnswers: 2, orphanJobs: 2 });
      expect(await journal.get(item.id)).toEqual(again);
    });

    it("'kept' counts a lost answer only: the job found is the item's", async () => {
      const item = await claimedFile(journal, 'w.docx', { mode: 'payload-word' });
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      const created = await journal.transition(item.id, 'created', {
        jobId: 'job-found',
        note: 'job found by name',
        lostAnswer: 'kept',
      });
      expect(created).toMatchObject({ state: 'created', jobId: 'job-found', lostAnswers: 1, orphanJobs: 0 });
    });

    it('the counts add up across kinds and moves, and a refusal can count the last one', async () => {
      const item = await creating();
      await journal.transition(item.id, 'creating', { lostAnswer: 'orphan' });
      await journal.transition(item.id, 'created', {
        jobId: 'job-2',
        uploadUrl: UPLOAD_URL,
        uploadDeadline: 1e15,
        lostAnswer: 'kept',
      });
      const refused = await journal.transition(item.id, 'rejected', {
        code: 'DOCEX_CREATE_UNANSWERED',
        reason: 'the answers to 2 job creates were lost',
        lostAnswer: 'orphan',
      });
      expect(refused).toMatchObject({ state: 'rejected', lostAnswers: 3, orphanJobs: 2 });
    });

    it('a move without lostAnswer counts nothing', async () => {
      const item = await creating();
      const next = await journal.transition(item.id, 'creating', { note: 'upload window over' });
      expect(next).toMatchObject({ lostAnswers: 0, orphanJobs: 0 });
    });

    it('a refused move counts nothing: the count is in the move’s own transaction', async () => {
      const item = await creating();
      // Illegal move (creating -> uploaded) and a move missing its fields (created without jobId).
      expect(await codeOf(journal.transition(item.id, 'uploaded', { md5: 'm', lostAnswer: 'orphan' }))).toBe(
        'DOCEX_JOURNAL_TRANSITION',
      );
      expect(await codeOf(journal.transition(item.id, 'created', { lostAnswer: 'kept' }))).toBe(
        'DOCEX_JOURNAL_FIELDS',
      );
      expect(await journal.get(item.id)).toEqual(item);
    });

    it('survives reopening the journal', async () => {
      const item = await creating();
      await journal.transition(item.id, 'creating', { lostAnswer: 'orphan' });
      await journal.transition(item.id, 'creating', { lostAnswer: 'orphan' });
      const other = await creating('other.pdf');
      await journal.transition(other.id, 'created', {
        jobId: 'job-o',
        uploadUrl: UPLOAD_URL,
        uploadDeadline: 1e15,
        lostAnswer: 'kept',
      });
      const reopened = await t.reopen();
      expect(await reopened.get(item.id)).toMatchObject({ lostAnswers: 2, orphanJobs: 2, attempt: 3 });
      expect(await reopened.get(other.id)).toMatchObject({ lostAnswers: 1, orphanJobs: 0 });
    });
  });
});
