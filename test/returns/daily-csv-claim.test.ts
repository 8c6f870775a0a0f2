/**
 * The daily CSV once across the agents on one journal: the follower writes due days only when it
 * claims the task (claimTask, the cluster's claimPeriodicTask) for a window shorter than
 * follow.maxIntervalMs; one that lost the claim, or whose write failed, looks again after
 * follow.maxIntervalMs under a new claim; nothing due, nothing claimed. The store is a real
 * returns.sqlite holding one final event; the claims are scripted.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import type { OutputTarget } from '../../src/outputs/types.js';
import { cronPlan } from '../../src/returns/cron-next.js';
import { DAILY_CSV_TASK, Follower } from '../../src/returns/follower.js';
import type { JournalFeed } from '../../src/returns/journal-feed.js';
import { csvFileName } from '../../src/returns/status-csv.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';
import { recordPolled } from './support/record-poll.js';
import { oneJobStore, scriptedClient, scriptedConfig } from './support/scripted.js';

const T0 = Date.parse('2026-11-21T10:00:00Z');
const DAY = '2026-11-21';
const emptyFeed = { after: async () => [] } as unknown as JournalFeed;

let dir: string;
let store: ReturnsStore;
let follower: Follower | undefined;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-csv-claim-'));
  store = await oneJobStore(dir, T0);
  // job_1's event became final on DAY; the job needs no more polls.
  await recordPolled(
    store,
    {
      jobId: 'job_1',
      status: 'COMPLETED',
      jobJson: '{}',
      events: [
        {
          id: 'se_1',
          businessStatus: 'DELIVERED',
          status: 'COMPLETED',
          json: JSON.stringify({
            id: 'se_1',
            businessStatus: 'DELIVERED',
            status: 'COMPLETED',
            documents: [],
          }),
          finalAt: T0,
          finalDay: DAY,
        },
      ],
      documents: [],
      nextPollAt: T0 + 1e12,
      unchangedPolls: 0,
      done: true,
      changed: true,
    },
    T0,
  );
});
afterEach(async () => {
  await follower?.stop();
  follower = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(statusTarget: OutputTarget, claims: [string, number][], answers: boolean[]) {
  const clock = new ManualClock(T0 + 86_400_000);
  const { log, lines } = captureLogger('debug');
  follower = new Follower({
    store,
    feed: emptyFeed,
    client: scriptedClient(),
    config: scriptedConfig,
    statusTarget,
    proofTarget: new LocalTarget(path.join(dir, 'proofs')),
    stateDir: dir,
    clock,
    log,
    maxSleepMs: 2,
    claimTask: async (name, periodMs) => {
      // Each firing of the poll schedule is claimed too: this agent sweeps them all.
      if (name !== 'returns:daily-csv') return true;
      claims.push([name, periodMs]);
      return answers.shift() ?? false;
    },
  });
  follower.start();
  return { clock, lines };
}

const WINDOW_MS = 0.9 * scriptedConfig.follow.maxIntervalMs;

it('leaves the CSV to the agent that claimed it, and writes it when it is still due after the window', async () => {
  const statuses = path.join(dir, 'statuses');
  const csv = path.join(statuses, csvFileName(DAY));
  const claims: [string, number][] = [];
  const { clock, lines } = start(new LocalTarget(statuses), claims, [false, true]);
  await waitFor(() =>
    lines().some((l) => l['msg'] === 'daily status file: another agent writes it; looked at again later'),
  );
  expect(existsSync(csv)).toBe(false);
  expect(claims).toEqual([[DAILY_CSV_TASK, WINDOW_MS]]);
  // The claimant never wrote it (it crashed): after the window the day is still due, claimed again.
  clock.advance(scriptedConfig.follow.maxIntervalMs);
  await waitFor(() => existsSync(csv));
  expect(claims).toHaveLength(2);
  await waitFor(async () => (await store.csvDaysDue('2026-11-23')).length === 0);
  // Nothing due at the next firing: looked at, nothing claimed.
  const looked = vi.spyOn(store, 'csvDaysDue');
  clock.set(cronPlan(scriptedConfig.statuses.dailyCsvSchedule).next(clock.now())! + 1_000);
  await waitFor(() => looked.mock.calls.length > 0);
  expect(await looked.mock.results[0]!.value).toEqual([]);
  expect(claims).toHaveLength(2);
});

it('retries a failed write after follow.maxIntervalMs, under a new claim', async () => {
  const statuses = new LocalTarget(path.join(dir, 'statuses'));
  let failures = 1;
  const failingOnce: OutputTarget = {
    description: statuses.description,
    write: async (relPath, content) => {
      if (relPath === csvFileName(DAY) && failures-- > 0) throw new Error('target down');
      return statuses.write(relPath, content);
    },
    exists: (relPath) => statuses.exists(relPath),
    close: () => statuses.close(),
  };
  const claims: [string, number][] = [];
  const { clock, lines } = start(failingOnce, claims, [true, true]);
  await waitFor(() => lines().some((l) => l['msg'] === 'daily status file failed: tried again later'));
  expect(claims).toHaveLength(1);
  clock.advance(scriptedConfig.follow.maxIntervalMs);
  await waitFor(() => existsSync(path.join(dir, 'statuses', csvFileName(DAY))));
  expect(claims).toHaveLength(2);
});
