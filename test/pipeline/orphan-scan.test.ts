/**
 * The running scan of a shared folder's `.processing/` for files no item stands for (several
 * agents on one journal, pipeline.takeOver). A file is an orphan only when the agent that moved it
 * is most likely gone: this agent's own files waiting for their claim to be recorded (a journal
 * outage can hold them for long) are never its orphans, and a record of an inspection younger
 * than the inspection time limit may be a live agent's inspection, not a crash's.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DocexError } from '../../src/core/errors.js';
import { FOLDER_UNSAFE_CODE } from '../../src/core/real-dir.js';
import type { JournalStore } from '../../src/journal/index.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
import { captureLogger } from '../api/support/log-capture.js';
import { makePartWorld, type PartWorld } from './support/step-context.js';

let world: PartWorld;
let pipeline: Pipeline | undefined;

afterEach(async () => {
  await pipeline?.stop(0);
  pipeline = undefined;
  await world.close();
});

function pipelineOn(journal: JournalStore, extra: { onFolderUnsafe?: () => void } = {}): Pipeline {
  // No job is created here: the scan's decisions are what is looked at.
  const jobs = { createSingleFile: () => new Promise(() => {}) } as unknown as PipelineJobs;
  return new Pipeline({
    ...world.ctx,
    journal,
    jobs,
    log: captureLogger('info').log,
    folders: world.folders,
    concurrency: 1,
    ...extra,
  });
}

it("does not take the agent's own file, whose claim waits for the journal, as an orphan", async () => {
  world = makePartWorld(['in']);
  const { journal } = world;
  // The claim's record held back, as a journal outage holds it.
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'recordClaim') {
        return async (...args: Parameters<JournalStore['recordClaim']>) => {
          await held;
          return target.recordClaim(...args);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  pipeline = pipelineOn(slow);
  const claimedPath = world.putClaimed('in', 'a.pdf', '%PDF-1.4\n%%EOF\n');
  pipeline.accept('in', { name: 'a.pdf', originalPath: path.join(world.dir, 'in', 'a.pdf'), claimedPath });

  // Every file counts as old enough (orphan age 0): only the agent's own knowledge keeps it.
  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 0 });
  release();
  await pipeline.idle();
  expect((await journal.byPath(claimedPath)).map((i) => i.fileName)).toEqual(['a.pdf']);
});

it('takes an orphan whose inspection records are younger than the time limit, not setting it aside as poison', async () => {
  world = makePartWorld(['in']);
  const { journal, clock } = world;
  pipeline = pipelineOn(journal);
  const orphan = world.putClaimed('in', 'b.pdf', '%PDF-1.4\n%%EOF\n');
  // Two starts without an end: what two agents inspecting it at once (or an end lost to a
  // journal outage, then a retry) leave behind, as two crashes would.
  await journal.inspectionStarting(orphan);
  await journal.inspectionStarting(orphan);

  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 1 });
  expect(existsSync(path.join(world.dir, 'in', '.error'))).toBe(false);

  // Past the time limit (and its margin), the same records are a crash's: set aside as poison.
  await pipeline.idle();
  const again = world.putClaimed('in', 'c.pdf', '%PDF-1.4\n%%EOF\n');
  await journal.inspectionStarting(again);
  await journal.inspectionStarting(again);
  clock.advance(10 * 60_000);
  expect(await pipeline.takeOver(10, 0)).toEqual({ takenOver: 0, orphans: 0 });
  expect(readdirSync(path.join(world.dir, 'in', '.error'))).toContain('c.pdf');
});

it('forgets the unrecorded files of a folder halted with files queued once the folder is removed, and leaves them in .processing', async () => {
  world = makePartWorld(['in']);
  const { journal } = world;
  // The first claims (concurrency 1: two files in flight, the scheduler's lookahead) find the
  // folder unsafe: the folder halts, and the third file, queued behind them, settles without running.
  const unsafe = new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'recordClaim') {
        return async () => {
          throw new DocexError(FOLDER_UNSAFE_CODE, 'the test makes the folder unsafe');
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  let halted = 0;
  pipeline = pipelineOn(unsafe, { onFolderUnsafe: () => halted++ });
  for (const name of ['a.pdf', 'b.pdf', 'c.pdf']) {
    const claimedPath = world.putClaimed('in', name, '%PDF-1.4\n%%EOF\n');
    pipeline.accept('in', { name, originalPath: path.join(world.dir, 'in', name), claimedPath });
  }
  await pipeline.idle();
  expect(halted).toBe(1);
  expect(pipeline.tracked().claiming).toBe(1);

  await pipeline.folderIdle('in');
  expect(pipeline.tracked()).toEqual({ folders: [], waiting: 0, claiming: 0 });
  expect(readdirSync(path.join(world.dir, 'in', '.processing')).sort()).toEqual(['a.pdf', 'b.pdf', 'c.pdf']);
});
