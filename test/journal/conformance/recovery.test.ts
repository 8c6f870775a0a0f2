/**
 * Conformance: what a restart finds (the recovery plan of every unfinished item, by the injected
 * clock) and inspections a crash interrupted. Every backend (support/backends.ts). The SIGKILL
 * crash child is SQLite's (sqlite-recovery.test.ts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_UPLOAD_MARGIN_MS, type RecoveryAction } from '../../../src/journal/states.js';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, UPLOAD_URL } from '../support/journal-harness.js';
import { claimedFile } from '../support/steps.js';

const HOUR = 3_600_000;

describeEachBackend('journal recovery', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  async function file(name: string, mode: 'single-file' | 'payload-word' | 'payload-pdf' = 'single-file') {
    return (await claimedFile(journal, name, { mode })).id;
  }

  async function toCreated(id: number, deadline: number) {
    await journal.transition(id, 'validated');
    await journal.transition(id, 'creating');
    await journal.transition(id, 'created', {
      jobId: `job-${id}`,
      uploadUrl: UPLOAD_URL,
      uploadDeadline: deadline,
    });
  }

  describe('restart after a stop', () => {
    it('every unfinished item comes back with the action its recorded state calls for', async () => {
      const start = t.clock.now();
      const claimed = await file('claimed.pdf');
      const validated = await file('validated.pdf');
      await journal.transition(validated, 'validated');
      const creating = await file('creating.pdf');
      await journal.transition(creating, 'validated');
      const jobName = (await journal.transition(creating, 'creating')).jobName!;
      const fresh = await file('fresh.pdf');
      await toCreated(fresh, start + 2 * HOUR);
      const stale = await file('stale.pdf');
      await toCreated(stale, start + HOUR);
      const expired = await file('expired.pdf');
      await toCreated(expired, start + 1000);
      const forgotten = await file('forgotten.pdf');
      await toCreated(forgotten, start + 2 * HOUR);
      await journal.forgetUploadUrl(forgotten);
      const uploaded = await file('uploaded.pdf');
      await toCreated(uploaded, start + 2 * HOUR);
      await journal.transition(uploaded, 'uploaded', { md5: 'm' });
      const done = await file('done.pdf');
      await toCreated(done, start + 2 * HOUR);
      await journal.transition(done, 'uploaded', { md5: 'm' });
      await journal.transition(done, 'done');
      const unsplit = await file('unsplit.csv', 'payload-pdf');
      await journal.transition(unsplit, 'validated');
      const wordCreated = await file('word.docx', 'payload-word');
      await journal.transition(wordCreated, 'validated');
      await journal.transition(wordCreated, 'creating');
      await journal.transition(wordCreated, 'created', { jobId: 'job-word' });
      const batch = await file('batch.csv', 'payload-word');
      await journal.transition(batch, 'validated');
      const [r0, r1, r2] = await journal.addRows(batch, [{ rowIndex: 0 }, { rowIndex: 1 }, { rowIndex: 2 }]);
      await journal.transition(r0!.id, 'creating');
      await journal.transition(r0!.id, 'created', { jobId: 'job-w0' });
      await journal.transition(r1!.id, 'rejected', { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'bad row' });
      const finishedRows = await file('finished-rows.csv', 'payload-word');
      await journal.transition(finishedRows, 'validated');
      const [f0] = await journal.addRows(finishedRows, [{ rowIndex: 0 }]);
      await journal.transition(f0!.id, 'rejected', { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'bad row' });

      const reopened = await t.reopen(); // the agent stops here, nothing finished
      t.clock.set(start + HOUR - DEFAULT_UPLOAD_MARGIN_MS + 1); // stale.pdf is inside the safety margin
      const steps = await reopened.recoveryPlan();
      const plan = new Map<number, RecoveryAction>(steps.map((s) => [s.item.id, s.action]));

      expect(plan.get(claimed)).toEqual({ kind: 'validate' });
      expect(plan.get(validated)).toEqual({ kind: 'create' });
      expect(plan.get(creating)).toEqual({ kind: 'lookup-then-create', jobName });
      expect(plan.get(fresh)).toEqual({
        kind: 'upload',
        jobId: `job-${fresh}`,
        msLeft: HOUR + DEFAULT_UPLOAD_MARGIN_MS - 1,
      });
      expect(plan.get(stale)).toEqual({
        kind: 'recreate',
        previousJobId: `job-${stale}`,
        why: 'near-deadline',
      });
      expect(plan.get(expired)).toEqual({
        kind: 'recreate',
        previousJobId: `job-${expired}`,
        why: 'expired',
      });
      expect(plan.get(forgotten)).toEqual({
        kind: 'recreate',
        previousJobId: `job-${forgotten}`,
        why: 'no-url',
      });
      expect(plan.get(uploaded)).toEqual({ kind: 'finish' });
      expect(plan.get(unsplit)).toEqual({ kind: 'validate' });
      expect(plan.get(wordCreated)).toEqual({ kind: 'finish' });
      expect(plan.get(batch)).toEqual({ kind: 'resume-rows', pending: 2 });
      expect(plan.get(r0!.id)).toEqual({ kind: 'finish' });
      expect(plan.get(r2!.id)).toEqual({ kind: 'create' });
      expect(plan.get(finishedRows)).toEqual({ kind: 'finish' });
      expect(plan.has(done)).toBe(false);
      expect(plan.has(r1!.id)).toBe(false);
      expect(plan.has(f0!.id)).toBe(false);
      // Oldest first, each item once, as recorded.
      expect(steps.map((s) => s.item.id)).toEqual([...plan.keys()].sort((a, b) => a - b));
      expect(steps.find((s) => s.item.id === fresh)?.item).toEqual(await reopened.get(fresh));
      expect(await reopened.revealUploadUrl(fresh)).toBe(UPLOAD_URL);
    });

    it('the plan follows the clock: an upload window that ran out while stopped means a recreate', async () => {
      const id = await file('late.pdf');
      await toCreated(id, t.clock.now() + 2 * HOUR);
      expect((await journal.recoveryPlan())[0]?.action.kind).toBe('upload');
      const reopened = await t.reopen();
      t.clock.advance(2 * HOUR);
      expect((await reopened.recoveryPlan())[0]?.action).toEqual({
        kind: 'recreate',
        previousJobId: `job-${id}`,
        why: 'expired',
      });
    });

    it('takes the upload margin it is given', async () => {
      const id = await file('margin.pdf');
      await toCreated(id, t.clock.now() + HOUR);
      expect((await journal.recoveryPlan({ marginMs: HOUR - 1 }))[0]?.action).toEqual({
        kind: 'upload',
        jobId: `job-${id}`,
        msLeft: HOUR,
      });
      expect((await journal.recoveryPlan({ marginMs: HOUR }))[0]?.action).toMatchObject({
        kind: 'recreate',
        why: 'near-deadline',
      });
    });

    it('an empty journal has nothing to resume', async () => {
      expect(await journal.recoveryPlan()).toEqual([]);
      expect(await journal.unfinished()).toEqual([]);
    });
  });

  describe('inspections a crash interrupted', () => {
    it('counts an inspection that never ended across reopenings; an ended one leaves nothing', async () => {
      const path = '/srv/in/.processing/poison.pdf';
      await journal.inspectionStarting(path);
      await journal.inspectionEnded(path);
      expect(await journal.interruptedInspections(path)).toBe(0);

      await journal.inspectionStarting(path);
      journal = await t.reopen();
      expect(await journal.interruptedInspections(path)).toBe(1);
      // Inspected again after the restart, and interrupted again.
      await journal.inspectionStarting(path);
      journal = await t.reopen();
      expect(await journal.interruptedInspections(path)).toBe(2);
      expect(await journal.interruptedInspections('/srv/in/.processing/other.pdf')).toBe(0);
      await journal.inspectionEnded(path);
      expect(await journal.interruptedInspections(path)).toBe(0);
      // Ending an inspection that is not recorded is harmless.
      await journal.inspectionEnded(path);
      expect(await journal.interruptedInspections(path)).toBe(0);
    });

    it('leaves out an inspection started at or after startedBefore: it may be a live agent’s', async () => {
      const path = '/srv/in/.processing/slow.pdf';
      const startedAt = t.clock.now();
      await journal.inspectionStarting(path);
      expect(await journal.interruptedInspections(path, startedAt)).toBe(0);
      expect(await journal.interruptedInspections(path, startedAt + 1)).toBe(1);
      t.clock.advance(60_000);
      await journal.inspectionStarting(path);
      // Started again: the record is as young as its last start.
      expect(await journal.interruptedInspections(path, startedAt + 1)).toBe(0);
      expect(await journal.interruptedInspections(path, t.clock.now() + 1)).toBe(2);
    });

    it('a claim given the inspected path clears its record in the claim, whatever the claim answers', async () => {
      const input = claimInput();
      await journal.inspectionStarting(input.claimedPath);
      const first = await journal.recordClaim({ ...input, inspectedPath: input.claimedPath });
      expect(first.kind).toBe('claimed');
      expect(await journal.interruptedInspections(input.claimedPath)).toBe(0);

      // The same file again while unfinished (answered in-progress): its record goes too.
      await journal.inspectionStarting(input.claimedPath);
      const again = await journal.recordClaim({ ...input, inspectedPath: input.claimedPath });
      expect(again.kind).toBe('in-progress');
      expect(await journal.interruptedInspections(input.claimedPath)).toBe(0);

      // Another file's record is not touched, and a claim without the path clears nothing.
      const other = '/srv/erp/in/.processing/other.pdf';
      await journal.inspectionStarting(other);
      await journal.recordClaim(claimInput({ fileName: 'b.pdf' }));
      journal = await t.reopen();
      expect(await journal.interruptedInspections(other)).toBe(1);
    });
  });
});
