/**
 * A claimed path is reused: a file leaves `.processing/x` (archived, refused) while its step still
 * settles, and the next file dropped as x is claimed to the very same path (the lowest free name;
 * a payload-pdf folder's fixed index.csv, one after another). The new claim is a file of its own:
 * it is recorded and driven, never taken for the one before it. One unrecorded claim handed over
 * twice (the orphan scan, recovery) is still taken once.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { JournalItem } from '../../src/journal/index.js';
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

function pipelineOn(onFinished?: (item: JournalItem) => void): Pipeline {
  // The files here are refused by their inspection: no job is ever created.
  const jobs = {} as PipelineJobs;
  return new Pipeline({
    ...world.ctx,
    jobs,
    log: captureLogger('info').log,
    folders: world.folders,
    concurrency: 1,
    ...(onFinished ? { onFinished } : {}),
  });
}

it('records and drives a file claimed at the path the file before it left while that file still settles', async () => {
  world = makePartWorld(['in']);
  const originalPath = path.join(world.dir, 'in', 'a.pdf');
  let claimedPath = '';
  const finished: { state: string; leftProcessing: boolean }[] = [];
  pipeline = pipelineOn((item) => {
    finished.push({ state: item.state, leftProcessing: !existsSync(claimedPath) });
    if (finished.length > 1) return;
    // The first file is in the error folder and its step has not settled yet: the next drop of
    // that name is claimed to the same path now.
    world.putClaimed('in', 'a.pdf', 'not a pdf either');
    pipeline!.accept('in', { name: 'a.pdf', originalPath, claimedPath });
  });
  claimedPath = world.putClaimed('in', 'a.pdf', 'not a pdf');
  pipeline.accept('in', { name: 'a.pdf', originalPath, claimedPath });
  await pipeline.idle();

  expect(finished).toEqual([
    { state: 'rejected', leftProcessing: true },
    { state: 'rejected', leftProcessing: true },
  ]);
  const items = await world.journal.byPath(claimedPath);
  expect(items.map((i) => i.state)).toEqual(['rejected', 'rejected']);
  expect(readdirSync(path.dirname(claimedPath))).not.toContain('a.pdf');
  expect(pipeline.tracked().claiming).toBe(0);
});

it('takes one unrecorded claim handed over twice once', async () => {
  world = makePartWorld(['in']);
  pipeline = pipelineOn();
  const claimedPath = world.putClaimed('in', 'b.pdf', 'not a pdf');
  const file = { name: 'b.pdf', originalPath: path.join(world.dir, 'in', 'b.pdf'), claimedPath };
  expect(pipeline.accept('in', file)).toBe(true);
  expect(pipeline.accept('in', file)).toBe(true);
  await pipeline.idle();

  expect((await world.journal.byPath(claimedPath)).map((i) => i.state)).toEqual(['rejected']);
  expect(pipeline.tracked().claiming).toBe(0);
});
