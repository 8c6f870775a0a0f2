/**
 * The running scan of a shared folder's `.processing/` for files no item stands for (several
 * agents on one journal, pipeline.takeOver). A file is an orphan only when the agent that moved it
 * is most likely gone: this agent's own files waiting for their claim to be recorded (a journal
 * outage can hold them for long) are never its orphans, and a record of an inspection younger
 * than the inspection time limit may be a live agent's inspection, not a crash's.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Workflow } from '../../src/domain/wire.js';
import type { JournalStore } from '../../src/journal/index.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
import { captureLogger } from '../api/support/log-capture.js';

let dir: string;
let processing: string;
let journal: SqliteJournal;
let pipeline: Pipeline | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-orphan-scan-'));
  processing = path.join(dir, 'in', '.processing');
  mkdirSync(processing, { recursive: true });
});
afterEach(async () => {
  await pipeline?.stop(0);
  pipeline = undefined;
  await journal?.close();
  rmSync(dir, { recursive: true, force: true });
});

function pipelineOn(store: JournalStore, clock: ManualClock): Pipeline {
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    stateDir: path.join(dir, 'state'),
    folders: [{ name: 'in', source: { type: 'local', path: path.join(dir, 'in') }, workflowId: 'wf' }],
  });
  // No job is created here: the scan's decisions are what is looked at.
  const jobs = {
    createSingleFile: () => new Promise(() => {}),
  } as unknown as PipelineJobs;
  const workflow = {
    id: 'wf',
    inputSource: { type: 'PDF' },
    enabled: true,
    validated: true,
  } as unknown as Workflow;
  return new Pipeline({
    journal: store,
    jobs,
    clock,
    log: captureLogger('info').log,
    maxFileBytes: 1 << 20,
    uploadMarginMs: 0,
    lookupMarginMs: 0,
    folders: new Map([['in', { config: config.folders[0]!, mode: 'single-file' as const, workflow }]]),
    concurrency: 1,
  });
}

it("does not take the agent's own file, whose claim waits for the journal, as an orphan", async () => {
  const clock = new ManualClock(Date.now());
  journal = SqliteJournal.open(path.join(dir, 'j.sqlite'), { clock, log: silentLogger() });
  // The claim's record held back, as a journal outage holds it.
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'recordClaim') {
        return async (...args: Parameters<SqliteJournal['recordClaim']>) => {
          await held;
          return target.recordClaim(...args);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  pipeline = pipelineOn(slow, clock);
  const claimedPath = path.join(processing, 'a.pdf');
  writeFileSync(claimedPath, '%PDF-1.4\n%%EOF\n');
  pipeline.accept('in', { name: 'a.pdf', originalPath: path.join(dir, 'in', 'a.pdf'), claimedPath });

  // Every file counts as old enough (orphan age 0): only the agent's own knowledge keeps it.
  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 0 });
  release();
  await pipeline.idle();
  expect((await journal.byPath(claimedPath)).map((i) => i.fileName)).toEqual(['a.pdf']);
});

it('takes an orphan whose inspection records are younger than the time limit, not setting it aside as poison', async () => {
  const clock = new ManualClock(Date.now());
  journal = SqliteJournal.open(path.join(dir, 'j.sqlite'), { clock, log: silentLogger() });
  pipeline = pipelineOn(journal, clock);
  const orphan = path.join(processing, 'b.pdf');
  writeFileSync(orphan, '%PDF-1.4\n%%EOF\n');
  // Two starts without an end: what two agents inspecting it at once (or an end lost to a
  // journal outage, then a retry) leave behind, as two crashes would.
  await journal.inspectionStarting(orphan);
  await journal.inspectionStarting(orphan);

  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 1 });
  expect(existsSync(path.join(dir, 'in', '.error'))).toBe(false);

  // Past the time limit (and its margin), the same records are a crash's: set aside as poison.
  await pipeline.idle();
  const again = path.join(processing, 'c.pdf');
  writeFileSync(again, '%PDF-1.4\n%%EOF\n');
  await journal.inspectionStarting(again);
  await journal.inspectionStarting(again);
  clock.advance(10 * 60_000);
  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 0 });
  expect(readdirSync(path.join(dir, 'in', '.error'))).toContain('c.pdf');
});
