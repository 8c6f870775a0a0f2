/**
 * SQLite only: a real kill. A child process records a file and dies by SIGKILL with the journal
 * open (no close, no checkpoint); the restart reads what it left in the file and its WAL. What a
 * restart does with each recorded state on every backend is conformance/recovery.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalStore } from '../../src/journal/store.js';
import { type JournalHarness, journalHarness, UPLOAD_URL } from './support/journal-harness.js';

const HOUR = 3_600_000;
const child = fileURLToPath(new URL('./support/crash-child.ts', import.meta.url));

let h: JournalHarness;
beforeEach(() => {
  h = journalHarness();
});
afterEach(() => h.cleanup());

/** Runs the child up to `state`, checks it was killed, and opens the journal it left. */
async function crashAfter(state: 'creating' | 'created'): Promise<JournalStore> {
  const run = spawnSync(process.execPath, ['--import', 'tsx', child, h.file, state], { encoding: 'utf8' });
  expect(run.signal, run.stderr).toBe('SIGKILL');
  return h.open();
}

describe('a real kill (SIGKILL with the journal open)', () => {
  it('a kill after the create intent: the restart looks the job up by its deterministic name', async () => {
    const reopened = await crashAfter('creating');
    const plan = await reopened.recoveryPlan();
    expect(plan).toHaveLength(1);
    const [step] = plan;
    expect(step?.item.state).toBe('creating');
    expect(step?.action).toEqual({ kind: 'lookup-then-create', jobName: step?.item.jobName });
    expect(step?.item.jobName).toMatch(/^invoice-2026-0001\.pdf\.dx-[0-9a-f]{12}-[0-9a-f]{6}$/);
  });

  it('a kill after the create answer: the restart uploads with the kept URL', async () => {
    const reopened = await crashAfter('created');
    const [step] = await reopened.recoveryPlan();
    expect(step?.action).toEqual({ kind: 'upload', jobId: 'job-crash', msLeft: 2 * HOUR });
    expect(await reopened.revealUploadUrl(step!.item.id)).toBe(UPLOAD_URL);
    expect((await reopened.history(step!.item.id)).map((e) => e.to)).toEqual([
      'claimed',
      'validated',
      'creating',
      'created',
    ]);
  });
});
