/**
 * The follower's loop under faults, with a real returns.sqlite and a scripted client: a store that
 * throws must not end the loop (or the process), and a webhook for an event of a managed
 * company's job must still find the job.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import type { CallOptions } from '../../src/api/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Job, SendingEvent } from '../../src/domain/wire.js';
import type { Follower, FollowerOptions } from '../../src/returns/follower.js';
import { followerCallbacks, type NudgeTarget } from '../../src/returns/inbound.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';
import { oneJobStore, scriptedClient, scriptedFollower } from './support/scripted.js';

let dir: string;
let store: ReturnsStore;
const clock = new ManualClock();

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follower-faults-'));
  store = await oneJobStore(dir, clock.now());
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function follower(o: Partial<FollowerOptions>): Follower {
  return scriptedFollower({ store, stateDir: dir, clock }, o);
}

const notFound = (route: string) =>
  new ApiError('DOCEX_API_404', 'not found', { status: 404, method: 'GET', route });

describe('follower faults', () => {
  it('keeps its loop running when returns.sqlite throws, logs it and polls once the store works again', async () => {
    let failures = 3;
    const failing = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'dueJobs' && failures > 0) {
          return () => {
            failures--;
            throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const polled: string[] = [];
    const logs = captureLogger('warn');
    const client = scriptedClient({
      jobGet: async (id) => {
        polled.push(id);
        return { id, status: 'COMPLETED', sendingEventCount: 1 } as Job;
      },
    });
    const f = follower({ store: failing, client, log: logs.log });
    f.start();
    await waitFor(() => polled.length > 0);
    await f.stop();
    expect(failures).toBe(0);
    const stepErrors = logs.lines().filter((l) => l['msg'] === 'follower step failed: tried again later');
    expect(stepErrors.map((l) => l['failures'])).toEqual([1, 2, 3]);
    // The backoff doubles: one loop period, then two, then four.
    expect(stepErrors.map((l) => l['retryInMs'])).toEqual([2, 4, 8]);
    expect(polled).toEqual(['job_1']);
  });

  it('sleeps longer while idle (steps up to five loop periods apart)', async () => {
    // Every step of the loop asks the store for the documents due: the steps, timed.
    const steps: number[] = [];
    const dueDocuments = store.dueDocuments.bind(store);
    store.dueDocuments = (now, limit) => {
      steps.push(performance.now());
      return dueDocuments(now, limit);
    };
    const client = scriptedClient({
      jobGet: async (id) => ({ id, status: 'COMPLETED', sendingEventCount: 0 }) as Job,
    });
    const f = follower({ client, maxSleepMs: 20 });
    f.start();
    await waitFor(() => steps.length >= 9);
    const gaps = steps.slice(1).map((at, i) => at - steps[i]!);
    // Timers never fire early: from the third idle pass on, each wait is 80-100 ms, not 20.
    for (const gap of gaps.slice(-3)) expect(gap).toBeGreaterThanOrEqual(75);
    await f.stop();
  });

  it('finds the event of a managed company job by asking again with each folder company after a 404', async () => {
    const asked: (string | undefined)[] = [];
    const client = scriptedClient({
      eventGet: async (id: string, options?: CallOptions) => {
        asked.push(options?.managedCompanyId);
        if (options?.managedCompanyId !== 'mc_2') throw notFound('/sending-events/{id}');
        return { id, jobId: 'job_1', status: 'IN_PROGRESS', businessStatus: 'IN_PROGRESS' } as SendingEvent;
      },
    });
    const f = follower({ client, companies: () => ['mc_1', 'mc_2'] });
    await expect(f.nudgeSendingEvent('se_9')).resolves.toBe(true);
    expect(asked).toEqual([undefined, 'mc_1', 'mc_2']);

    asked.length = 0;
    const none = follower({ client, companies: () => ['mc_1'] });
    await expect(none.nudgeSendingEvent('se_9')).rejects.toMatchObject({ status: 404 });
    expect(asked).toEqual([undefined, 'mc_1']);
  });

  it('asks the service nothing for a sending-event webhook that names a job this agent does not follow', async () => {
    const calls: string[] = [];
    const target: NudgeTarget = {
      recordNudge: async (jobId: string) => {
        calls.push(`nudge ${jobId}`);
        return false;
      },
      pollNow: () => {},
      jobOfSendingEvent: async (id: string) => {
        calls.push(`get ${id}`);
        return undefined;
      },
      recordPollUnfinished: async () => {},
      catchUpAfterStart: () => {},
      webhooksActive: () => {},
    };
    const callbacks = followerCallbacks(target, silentLogger());
    expect(await callbacks.onSendingEvent?.('se_1', 'job_of_another_agent')).toBeUndefined();
    expect(await callbacks.onSendingEvent?.('se_2')).toBeUndefined();
    expect(calls).toEqual(['nudge job_of_another_agent', 'get se_2']);
  });
});
