/**
 * A file handed to the pipeline that is gone from `.processing/` before its claim was recorded (on
 * a shared folder: another agent took it as an orphan while this one could not reach the journal):
 * nothing is recorded, nothing is sent, and it is said once at info, not as a failed step.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/index.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Workflow } from '../../src/domain/wire.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
import { captureLogger } from '../api/support/log-capture.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('records nothing and logs one info line for a file gone from .processing before its claim', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-gone-'));
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    stateDir: path.join(dir, 'state'),
    folders: [{ name: 'in', source: { type: 'local', path: path.join(dir, 'in') }, workflowId: 'wf' }],
  });
  mkdirSync(path.join(dir, 'in', '.processing'), { recursive: true });
  const clock = new ManualClock();
  const capture = captureLogger('info');
  const journal = SqliteJournal.open(path.join(dir, 'state', 'j.sqlite'), { clock, log: capture.log });
  let creates = 0;
  const jobs = {
    createSingleFile: async () => {
      creates++;
      throw new Error('no create expected');
    },
  } as unknown as PipelineJobs;
  const workflow = {
    id: 'wf',
    inputSource: { type: 'PDF' },
    enabled: true,
    validated: true,
  } as unknown as Workflow;
  const pipeline = new Pipeline({
    journal,
    jobs,
    clock,
    log: capture.log,
    maxFileBytes: 1 << 20,
    uploadMarginMs: 0,
    lookupMarginMs: 0,
    folders: new Map([['in', { config: config.folders[0]!, mode: 'single-file' as const, workflow }]]),
    concurrency: 1,
  });
  const lost: unknown[] = [];
  pipeline.accept(
    'in',
    {
      name: 'a.pdf',
      originalPath: path.join(dir, 'in', 'a.pdf'),
      claimedPath: path.join(dir, 'in', '.processing', 'a.pdf'),
    },
    (err) => lost.push(err),
  );
  await pipeline.idle();
  expect(lost).toHaveLength(1);
  expect(creates).toBe(0);
  expect(await journal.recent()).toEqual([]);
  const lines = capture.lines();
  expect(lines.filter((l) => (l['level'] as number) >= 50)).toEqual([]);
  expect(lines.map((l) => l['msg'])).toContain(
    'file gone from .processing before it was recorded: left to whoever moved it',
  );
  await journal.close();
});
