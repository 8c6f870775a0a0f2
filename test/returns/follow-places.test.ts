/**
 * The follower's tasks in the pace of the service host it shares with the intake: a real
 * returns.sqlite, a scripted client, a fake clock and a pace of two places. A follower task never
 * takes a place past the limit, and leaves its place to the intake while it waits for its own
 * budget (follow.maxCallsPerMinute).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostPace } from '../../src/api/host-pace.js';
import { Pacing } from '../../src/api/pacing.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Job } from '../../src/domain/wire.js';
import type { Follower, FollowerOptions } from '../../src/returns/follower.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { waitFor } from '../support/wait-for.js';
import {
  followedJob,
  oneJobStore,
  scriptedClient,
  scriptedConfig,
  scriptedFollower,
} from './support/scripted.js';

let dir: string;
let store: ReturnsStore;
const clock = new ManualClock();

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follow-places-'));
  store = await oneJobStore(dir, clock.now());
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function follower(o: Partial<FollowerOptions>): Follower {
  return scriptedFollower({ store, stateDir: dir, clock }, o);
}

/** `job_<n>` of `inv-<n>.pdf` followed and due now, next to the store's job_1. */
async function addJob(n: number): Promise<void> {
  const t0 = clock.now();
  await store.addJobs([followedJob(n, t0)], 'cursor', String(n), t0);
}

function hostPace(concurrency: number): HostPace {
  return new HostPace(clock, new Pacing({ concurrency }), silentLogger(), { maxSleepMs: 2 });
}

/** A store whose first read of a job's source waits for `open`. */
function slowSource(base: ReturnsStore) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reading = false;
  const slow = new Proxy(base, {
    get(target, key, receiver) {
      if (key === 'source' && !reading) {
        return async (id: number) => {
          reading = true;
          await opened;
          return target.source(id);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: slow, open, reading: () => reading };
}

/** How many times the follower looked for free places (once per fill of its loop, at least). */
function countLooks(pace: HostPace): () => number {
  let looks = 0;
  const free = pace.free.bind(pace);
  pace.free = () => {
    looks++;
    return free();
  };
  return () => looks;
}

describe('follower tasks in the shared pace', () => {
  it('takes no place past the limit when the intake took the last ones while the job was read from the store', async () => {
    const pace = hostPace(2);
    const slow = slowSource(store);
    const polled: string[] = [];
    const client = scriptedClient({
      jobGet: async (id) => {
        polled.push(id);
        return { id, status: 'COMPLETED', sendingEventCount: 0 } as Job;
      },
    });
    const f = follower({ store: slow.store, client, pace });
    f.start();
    // The follower found the job due (a place was free then) and reads its source...
    await waitFor(() => slow.reading());
    // ...while the intake takes both places.
    const intake = [
      await pace.attempts({ caller: 'intake' }).begin(),
      await pace.attempts({ caller: 'intake' }).begin(),
    ];
    const looks = countLooks(pace);
    slow.open();
    // Two more looks: the follower saw the pace full and started nothing.
    await waitFor(() => looks() >= 3);
    expect(pace.inFlight()).toBe(2);
    expect(polled).toEqual([]);
    // A place frees: the job is polled then.
    intake[0]!({ ok: true });
    await waitFor(() => polled.length === 1);
    expect(pace.inFlight()).toBeLessThanOrEqual(2);
    intake[1]!({ ok: true });
    await f.stop();
    expect(polled).toEqual(['job_1']);
  });

  it('leaves the places to the intake while its tasks wait for their own budget of calls per minute, and makes its next call when the budget allows', async () => {
    for (const n of [2, 3]) await addJob(n);
    const pace = hostPace(2);
    const polled: string[] = [];
    const scripted = scriptedClient({
      jobGet: async (id) => {
        polled.push(id);
        return { id, status: 'COMPLETED', sendingEventCount: 0 } as Job;
      },
    });
    // Every call the follower makes (a job read, or the event list of a job read before).
    let calls = 0;
    const client = {
      jobs: {
        get: (...args: Parameters<typeof scripted.jobs.get>) => {
          calls++;
          return scripted.jobs.get(...args);
        },
      },
      sendingEvents: {
        ...scripted.sendingEvents,
        list: (...args: Parameters<typeof scripted.sendingEvents.list>) => {
          calls++;
          return scripted.sendingEvents.list(...args);
        },
      },
    };
    const config = { ...scriptedConfig, follow: { ...scriptedConfig.follow, maxCallsPerMinute: 1 } };
    // Each task's source is read from the store right before the task starts.
    const read = new Set<number>();
    const reading = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'source') {
          return (id: number) => {
            read.add(id);
            return target.source(id);
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const f = follower({ store: reading, client, pace, config });
    f.start();
    // The minute's one call is spent on one job; the task of another (the follower's limit is the
    // pace's two places) started and waits for the next minute...
    await waitFor(() => polled.length === 1 && read.size === 2);
    // ...holding no place: the intake's calls take both.
    const ended = await Promise.all([
      pace.attempts({ caller: 'intake' }).begin(),
      pace.attempts({ caller: 'intake' }).begin(),
    ]);
    expect(pace.inFlight()).toBe(2);
    expect(polled.length).toBe(1);
    for (const end of ended) end({ ok: true });
    // The next minute: the follower makes its next call (a waiting job's read, or the event list
    // of job_1, due again by then: whichever takes the minute's one call first).
    const before = calls;
    clock.advance(60_000);
    await waitFor(() => calls === before + 1);
    await f.stop();
    expect(calls).toBe(before + 1);
  });
});
