/**
 * Follow polls once across the agents on one journal: at each firing of follow.schedule the
 * follower polls the jobs due only when it claims the firing (claimTask, task
 * returns:follow-sweep); an agent that lost the claim polls nothing, one that claims polls. The
 * store is a real returns.sqlite with one job due; the claims are scripted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Job } from '../../src/domain/wire.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { FOLLOW_SWEEP_TASK, Follower } from '../../src/returns/follower.js';
import type { JournalFeed } from '../../src/returns/journal-feed.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';
import { oneJobStore, scriptedClient, scriptedConfig } from './support/scripted.js';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const emptyFeed = { after: async () => [] } as unknown as JournalFeed;

let dir: string;
let store: ReturnsStore;
let follower: Follower | undefined;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-sweep-claim-'));
  store = await oneJobStore(dir, T0);
});
afterEach(async () => {
  await follower?.stop();
  follower = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(ours: boolean) {
  const { log, lines } = captureLogger('debug');
  const claims: string[] = [];
  let polls = 0;
  follower = new Follower({
    store,
    feed: emptyFeed,
    client: scriptedClient({
      jobGet: async () => {
        polls++;
        return { id: 'job_1', status: 'COMPLETED', sendingEventCount: 1 } as Job;
      },
    }),
    config: scriptedConfig,
    statusTarget: new LocalTarget(path.join(dir, 'statuses')),
    proofTarget: new LocalTarget(path.join(dir, 'proofs')),
    stateDir: dir,
    clock: new ManualClock(T0 + 1_000),
    log,
    maxSleepMs: 2,
    claimTask: async (name) => {
      claims.push(name);
      return name === FOLLOW_SWEEP_TASK ? ours : false;
    },
  });
  follower.start();
  return { claims, lines, polls: () => polls };
}

it('polls the due job when this agent claims the firing', async () => {
  const run = start(true);
  await waitFor(async () => run.polls() > 0);
  expect(run.claims).toContain(FOLLOW_SWEEP_TASK);
});

it('polls nothing at a firing another agent claimed', async () => {
  const run = start(false);
  await waitFor(async () =>
    run.lines().some((l) => l['msg'] === 'follow sweep: another agent polls this firing'),
  );
  await follower!.stop();
  follower = undefined;
  expect(run.polls()).toBe(0);
});
