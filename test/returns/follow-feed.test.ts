/**
 * How the follower learns of jobs done: the intake journal is read at its start (jobs done while
 * it was stopped), when the pipeline of its process says a job is done (jobsDone), and otherwise
 * only by a slow timer, once per follow.firstPollMs of the clock: the safety net for jobs no nudge
 * announces (another agent's on a shared PostgreSQL journal). Not on every step. The feed is
 * scripted; the store is a real returns.sqlite; the clock stands still unless moved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { DoneJobItem } from '../../src/journal/index.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { Follower } from '../../src/returns/follower.js';
import type { JournalFeed } from '../../src/returns/journal-feed.js';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { waitFor } from '../support/wait-for.js';
import { scriptedClient, scriptedConfig } from './support/scripted.js';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const FIRST_POLL_MS = scriptedConfig.follow.firstPollMs;

let dir: string;
let store: ReturnsStore;
let follower: Follower | undefined;
let clock: ManualClock;
/** The journal's done jobs, as another process adds them. */
let done: DoneJobItem[];
let reads: number;
let steps: number;

const item = (n: number): DoneJobItem => ({
  cursor: n,
  itemId: n,
  rowIndex: undefined,
  label: undefined,
  jobId: `job_${n}`,
  jobName: undefined,
  doneAt: clock.now(),
  source: { itemId: n, folder: 'pdf', fileName: `inv-${n}.pdf`, sha256: 'ab', claimedAt: clock.now() },
});

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follow-feed-'));
  clock = new ManualClock(T0);
  store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), T0);
  // Every step of the follower's loop asks the store for the documents due: the steps, counted.
  const dueDocuments = store.dueDocuments.bind(store);
  store.dueDocuments = (now, limit) => {
    steps++;
    return dueDocuments(now, limit);
  };
  done = [];
  reads = 0;
  steps = 0;
});
afterEach(async () => {
  await follower?.stop();
  follower = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(): Follower {
  const feed = {
    after: async (cursor: number, limit: number) => {
      reads++;
      return done.filter((d) => d.cursor > cursor).slice(0, limit);
    },
  } as unknown as JournalFeed;
  follower = new Follower({
    store,
    feed,
    client: scriptedClient(),
    config: scriptedConfig,
    statusTarget: new LocalTarget(path.join(dir, 'statuses')),
    proofTarget: new LocalTarget(path.join(dir, 'proofs')),
    stateDir: dir,
    clock,
    log: silentLogger(),
    maxSleepMs: 2,
  });
  follower.start();
  return follower;
}

/** Lets the loop take `n` more steps. */
async function moreSteps(n: number): Promise<void> {
  const target = steps + n;
  await waitFor(async () => steps >= target);
}

const followed = async (jobId: string) => (await store.job(jobId)) !== undefined;

it('reads the journal at its start, then when the pipeline says a job is done, and not at every step', async () => {
  done.push(item(1));
  const f = start();
  // Jobs done while the follower was stopped (a restart) are found at its start.
  await waitFor(() => followed('job_1'));
  expect(reads).toBe(1);

  await moreSteps(10);
  expect(reads).toBe(1);

  done.push(item(2));
  f.jobsDone();
  await waitFor(() => followed('job_2'));
  expect(reads).toBe(2);
});

it('finds a job no nudge announced (another agent finished it) once follow.firstPollMs passed on the clock', async () => {
  start();
  await waitFor(async () => reads === 1);
  done.push(item(3));
  await moreSteps(10);
  expect(await followed('job_3')).toBe(false);

  clock.advance(FIRST_POLL_MS);
  await waitFor(() => followed('job_3'));
  expect(reads).toBe(2);
});

it('reads a burst of nudges once per loop period, and misses none of their jobs', async () => {
  const f = start();
  await waitFor(async () => reads === 1);
  for (let n = 10; n < 60; n++) {
    done.push(item(n));
    f.jobsDone();
  }
  await waitFor(() => followed('job_59'));
  for (let n = 10; n < 60; n++) expect(await followed(`job_${n}`)).toBe(true);
  expect(reads).toBe(2);
});
