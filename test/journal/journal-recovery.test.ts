import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Journal } from '../../src/journal/journal.js';
import { DEFAULT_UPLOAD_MARGIN_MS, type RecoveryAction } from '../../src/journal/states.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  sha256,
  UPLOAD_URL,
} from './support/journal-harness.js';

let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

const HOUR = 3_600_000;

function file(name: string, mode: 'single-file' | 'payload-word' = 'single-file') {
  const result = journal.recordClaim(claimInput({ fileName: name, sha256: sha256(name), mode }));
  return result.item.id;
}

function toCreated(id: number, deadline: number) {
  journal.transition(id, 'validated');
  journal.transition(id, 'creating');
  journal.transition(id, 'created', { jobId: `job-${id}`, uploadUrl: UPLOAD_URL, uploadDeadline: deadline });
}

describe('restart after a crash', () => {
  it('every unfinished item comes back with the action its recorded state calls for', () => {
    const start = h.clock.now();
    const claimed = file('claimed.pdf');
    const validated = file('validated.pdf');
    journal.transition(validated, 'validated');
    const creating = file('creating.pdf');
    journal.transition(creating, 'validated');
    const jobName = journal.transition(creating, 'creating').jobName!;
    const fresh = file('fresh.pdf');
    toCreated(fresh, start + 2 * HOUR);
    const stale = file('stale.pdf');
    toCreated(stale, start + HOUR);
    const uploaded = file('uploaded.pdf');
    toCreated(uploaded, start + 2 * HOUR);
    journal.transition(uploaded, 'uploaded', { md5: 'm' });
    const done = file('done.pdf');
    toCreated(done, start + 2 * HOUR);
    journal.transition(done, 'uploaded', { md5: 'm' });
    journal.transition(done, 'done');
    const batch = file('batch.csv', 'payload-word');
    journal.transition(batch, 'validated');
    const [r0, r1] = journal.addRows(batch, [{ rowIndex: 0 }, { rowIndex: 1 }]);
    journal.transition(r0!.id, 'creating');
    journal.transition(r0!.id, 'created', { jobId: 'job-w0' });
    journal.transition(r1!.id, 'rejected', { code: 'DOCEX_PAYLOAD_RULE', reason: 'bad row' });

    journal.close(); // the agent stops here, nothing finished
    h.clock.set(start + HOUR - DEFAULT_UPLOAD_MARGIN_MS + 1); // stale.pdf is inside the safety margin
    const reopened = h.open();
    const plan = new Map<number, RecoveryAction>(reopened.recoveryPlan().map((s) => [s.item.id, s.action]));

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
    expect(plan.get(uploaded)).toEqual({ kind: 'finish' });
    expect(plan.get(batch)).toEqual({ kind: 'resume-rows', pending: 1 });
    expect(plan.get(r0!.id)).toEqual({ kind: 'finish' });
    expect(plan.has(done)).toBe(false);
    expect(plan.has(r1!.id)).toBe(false);
    expect(reopened.revealUploadUrl(fresh)).toBe(UPLOAD_URL);
  });

  describe('a real kill (SIGKILL with the journal open)', () => {
    const child = fileURLToPath(new URL('./support/crash-child.ts', import.meta.url));
    const crashAfter = (state: string) => {
      journal.close();
      const run = spawnSync(process.execPath, ['--import', 'tsx', child, h.file, state], {
        encoding: 'utf8',
      });
      expect(run.signal, run.stderr).toBe('SIGKILL');
      return h.open();
    };

    it('a kill after the create intent: the restart looks the job up by its deterministic name', () => {
      const reopened = crashAfter('creating');
      const [step] = reopened.recoveryPlan();
      expect(step?.item.state).toBe('creating');
      expect(step?.action).toEqual({ kind: 'lookup-then-create', jobName: step?.item.jobName });
      expect(step?.item.jobName).toMatch(/^invoice-2026-0001\.pdf\.dx-[0-9a-f]{12}-[0-9a-f]{6}$/);
    });

    it('a kill after the create answer: the restart uploads with the kept URL', () => {
      const reopened = crashAfter('created');
      const [step] = reopened.recoveryPlan();
      expect(step?.action).toEqual({ kind: 'upload', jobId: 'job-crash', msLeft: 2 * HOUR });
      expect(reopened.revealUploadUrl(step!.item.id)).toBe(UPLOAD_URL);
      expect(reopened.history(step!.item.id).map((e) => e.to)).toEqual([
        'claimed',
        'validated',
        'creating',
        'created',
      ]);
    });
  });
});

describe('inspections a crash interrupted', () => {
  it('counts an inspection that never ended across reopenings; an ended one leaves nothing', () => {
    const file = '/srv/in/.processing/poison.pdf';
    journal.inspectionStarting(file);
    journal.inspectionEnded(file);
    expect(journal.interruptedInspections(file)).toBe(0);

    journal.inspectionStarting(file);
    journal.close();
    journal = h.open();
    expect(journal.interruptedInspections(file)).toBe(1);
    // Inspected again after the restart, and interrupted again.
    journal.inspectionStarting(file);
    journal.close();
    journal = h.open();
    expect(journal.interruptedInspections(file)).toBe(2);
    expect(journal.interruptedInspections('/srv/in/.processing/other.pdf')).toBe(0);
    journal.inspectionEnded(file);
    expect(journal.interruptedInspections(file)).toBe(0);
  });
});
