/**
 * A webhook is acknowledged only once its effect is durable: the inbound part as the agent wires it
 * (startInbound with followerCallbacks over a real Follower and returns.sqlite), a store made slow
 * or failing where the test needs it. The 202 comes after the job's poll due now is in the store;
 * an effect that cannot be recorded answers 503 and leaves the id unknown, so the redelivery is new.
 * And at a start with webhooks on, every unfinished job is polled within the first minute, spread.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallOptions } from '../../src/api/index.js';
import { peppolInboxSchema, webhooksSchema } from '../../src/config/inbound-schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { DocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { OutputTarget } from '../../src/outputs/types.js';
import { CATCH_UP_SPREAD_MS, Follower, type FollowerOptions } from '../../src/returns/follower.js';
import { followerCallbacks, type Inbound, startInbound } from '../../src/returns/inbound.js';
import type { JournalFeed } from '../../src/returns/journal-feed.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { POLL_UNFINISHED_KEY, type ReturnsStore } from '../../src/returns/store.js';
import { storeWebhookSecret } from '../../src/returns/webhook-secrets.js';
import { newWebhookSecret } from '../../src/sandbox/routes/webhooks.js';
import { waitFor } from '../support/wait-for.js';
import { oneJobStore, scriptedClient, scriptedConfig } from './support/scripted.js';

const T0 = 1_800_000_000_000;
/** Where a poll while webhooks arrive leaves a job's next poll (intervalWhileWebhooksMs). */
const THIRTY_MINUTES = 30 * 60_000;

let dir: string;
let stateDir: string;
let clock: ManualClock;
let store: ReturnsStore;
let secret: string;
let inbound: Inbound | undefined;
let follower: Follower | undefined;

const noFeed = { after: async () => [] } as unknown as JournalFeed;
const nowhere: OutputTarget = {
  description: 'nowhere',
  write: async () => {},
  exists: async () => false,
  close: async () => {},
};

/** A client whose calls never answer: they end only when their signal aborts (a stop, a deadline). */
const silentClient = () => {
  const hang = (options?: CallOptions) =>
    new Promise<never>((_, reject) => {
      const signal = options?.signal;
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return scriptedClient({
    jobGet: async (_id, options) => hang(options),
    eventGet: async (_id, options) => hang(options),
  });
};

function makeFollower(o: Partial<FollowerOptions> = {}): Follower {
  follower = new Follower({
    store,
    feed: noFeed,
    client: silentClient(),
    config: scriptedConfig,
    statusTarget: nowhere,
    proofTarget: nowhere,
    stateDir: dir,
    clock,
    log: silentLogger(),
    maxSleepMs: 2,
    ...o,
  });
  return follower;
}

/** The inbound part with webhooks on, its callbacks on `f` (as the agent wires them). */
async function startWebhooks(f: Follower, eventLookupDeadlineMs?: number): Promise<Inbound> {
  inbound = await startInbound({
    config: {
      stateDir,
      peppolInbox: peppolInboxSchema.parse({ enabled: false }),
      webhooks: webhooksSchema.parse({ enabled: true, listen: '127.0.0.1:0' }),
    },
    journal: { kind: 'sqlite', file: path.join(stateDir, 'journal.sqlite') },
    client: {},
    clock,
    log: silentLogger(),
    callbacks: followerCallbacks(f, silentLogger(), eventLookupDeadlineMs ? { eventLookupDeadlineMs } : {}),
  });
  return inbound;
}

/** A store whose `method` waits for the test: `entered` counts the calls, `release` lets them on. */
function held(method: keyof ReturnsStore) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const state = { entered: 0, done: 0, release: () => release() };
  const slow = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      if (key !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        state.entered++;
        await gate;
        const result = await value.apply(target, args);
        state.done++;
        return result;
      };
    },
  });
  return { store: slow, state };
}

/** A store whose `pollSoon` fails as the PostgreSQL store does in an outage, while `down()` holds. */
function failing(down: () => boolean): ReturnsStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      if (key === 'pollSoon') {
        return async (...args: unknown[]) => {
          if (down())
            throw new DocexError('DOCEX_JOURNAL_UNAVAILABLE', 'the journal database is unreachable');
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

function delivery(type: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id: 'evt', type, timestamp: new Date().toISOString(), data });
}

/** POSTs `text` signed as webhook `id` (a fresh timestamp each time, as a retry of the sender's). */
async function post(text: string, id: string): Promise<{ status: number; body: unknown }> {
  const at = new Date();
  const res = await request(inbound!.receiver!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, text),
    },
    body: text,
  });
  const answer = await res.body.text();
  return { status: res.statusCode, body: answer ? JSON.parse(answer) : undefined };
}

const jobEvent = delivery('job.status.changed', { jobId: 'job_1', status: 'COMPLETED' });
const nextPoll = async (jobId = 'job_1') => (await store.job(jobId))!.nextPollAt;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhook-ack-'));
  stateDir = path.join(dir, 'state');
  clock = new ManualClock(T0);
  store = await oneJobStore(dir, T0 - 60_000);
  // Polled a minute ago while webhooks arrived: next poll 30 minutes out.
  await store.recordPoll(
    {
      jobId: 'job_1',
      status: 'PROCESSING',
      jobJson: '{}',
      nextPollAt: T0 - 60_000 + THIRTY_MINUTES,
      unchangedPolls: 0,
      done: false,
      changed: true,
    },
    T0 - 60_000,
  );
  secret = newWebhookSecret();
  storeWebhookSecret(stateDir, 'wh_1', secret);
});

afterEach(async () => {
  await inbound?.stop();
  inbound = undefined;
  await follower?.stop();
  follower = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a webhook acknowledged once its effect is durable', () => {
  it('answers 202 only after the job’s poll due now is in the store (a slow store: the answer waits)', async () => {
    const { store: slow, state } = held('pollSoon');
    const ib = await startWebhooks(makeFollower({ store: slow }));
    const order: string[] = [];
    const answered = post(jobEvent, 'msg_slow').then((a) => {
      order.push(`answered ${a.status}`);
      return a;
    });
    await waitFor(() => state.entered === 1);
    // The effect is not recorded yet: no answer, and the id is not remembered.
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual([]);
    expect(await ib.store.webhookSeen('msg_slow')).toBe(false);
    expect(await nextPoll()).toBe(T0 - 60_000 + THIRTY_MINUTES);

    order.push('effect released');
    state.release();
    expect(await answered).toEqual({ status: 202, body: { status: 'accepted' } });
    expect(state.done).toBe(1);
    expect(order).toEqual(['effect released', 'answered 202']);
    // At the answer, the store already holds both: the poll due now and the id.
    expect(await nextPoll()).toBe(T0);
    expect(await ib.store.webhookSeen('msg_slow')).toBe(true);
    // The same delivery again is a duplicate, and does not record the effect again.
    expect(await post(jobEvent, 'msg_slow')).toEqual({ status: 200, body: { status: 'duplicate' } });
    expect(state.entered).toBe(1);
  });

  it('answers 503 while the effect cannot be recorded, remembers nothing, and handles the redelivery as new', async () => {
    let down = true;
    const ib = await startWebhooks(makeFollower({ store: failing(() => down) }));
    expect(await post(jobEvent, 'msg_outage')).toEqual({
      status: 503,
      body: { error: 'effect-not-recorded' },
    });
    expect(await ib.store.webhookSeen('msg_outage')).toBe(false);
    expect(await nextPoll()).toBe(T0 - 60_000 + THIRTY_MINUTES);
    expect(ib.receiver!.counts).toEqual({ accepted: 0, rejected: 1 });

    // The sender's retry, once the store is back: new, and its effect recorded.
    down = false;
    clock.advance(5_000);
    expect(await post(jobEvent, 'msg_outage')).toEqual({ status: 202, body: { status: 'accepted' } });
    expect(await nextPoll()).toBe(T0 + 5_000);
    expect(await ib.store.webhookSeen('msg_outage')).toBe(true);
    expect(await post(jobEvent, 'msg_outage')).toEqual({ status: 200, body: { status: 'duplicate' } });
  });

  it('lets two deliveries of one id at once both record the effect, and counts only one as new', async () => {
    const { store: slow, state } = held('pollSoon');
    await startWebhooks(makeFollower({ store: slow }));
    const both = Promise.all([post(jobEvent, 'msg_twice'), post(jobEvent, 'msg_twice')]);
    await waitFor(() => state.entered === 2);
    state.release();
    const statuses = (await both).map((a) => a.status).sort();
    expect(statuses).toEqual([200, 202]);
    expect(state.done).toBe(2);
    expect(await nextPoll()).toBe(T0);
  });

  it('a sending event without a job id whose job is not found in time: 202 once every unfinished job is due within a minute', async () => {
    const f = makeFollower();
    const ib = await startWebhooks(f, 50);
    const event = delivery('sending.event.status.changed', { sendingEventId: 'se_unknown' });
    const started = performance.now();
    expect(await post(event, 'msg_no_job')).toEqual({ status: 202, body: { status: 'accepted' } });
    // Bounded by the lookup deadline (50 ms), not by the sender's 15 s: under 10 s leaves a loaded
    // machine its stalls and still tells the two apart.
    expect(performance.now() - started).toBeLessThan(10_000);
    // Answered with the request recorded: a stop now would not lose it.
    expect(await store.getMeta(POLL_UNFINISHED_KEY)).toBe(String(T0));
    expect(await ib.store.webhookSeen('msg_no_job')).toBe(true);

    f.start();
    await waitFor(async () => (await store.getMeta(POLL_UNFINISHED_KEY)) === undefined);
    expect(await nextPoll()).toBeLessThan(T0 + CATCH_UP_SPREAD_MS);
  });

  it('a sending event without a job id whose job the service names: the job’s poll due now before the answer', async () => {
    const f = makeFollower({
      client: scriptedClient({
        eventGet: async (id) =>
          ({ id, jobId: 'job_1', status: 'IN_PROGRESS', businessStatus: 'IN_PROGRESS' }) as never,
      }),
    });
    await startWebhooks(f);
    const event = delivery('sending.event.file.ready', { sendingEventId: 'se_new' });
    expect((await post(event, 'msg_found')).status).toBe(202);
    expect(await nextPoll()).toBe(T0);
    expect(await store.getMeta(POLL_UNFINISHED_KEY)).toBeUndefined();
  });
});

describe('the follower at a start with webhooks on', () => {
  const N = 20;

  /** N more unfinished jobs whose next poll was saved 30 minutes out (and job_1, the same). */
  async function backlog(): Promise<string[]> {
    const ids = Array.from({ length: N }, (_, i) => `job_b${String(i).padStart(2, '0')}`);
    await store.addJobs(
      ids.map((jobId, i) => ({
        jobId,
        source: {
          itemId: 100 + i,
          folder: 'pdf',
          fileName: `${jobId}.pdf`,
          sha256: 'ab',
          claimedAt: T0,
          day: '2027-01-15',
        },
        statusPath: (collision) => statusFilePath('2027-01-15', `${jobId}.pdf`, 100 + i, collision),
        itemId: 100 + i,
        rowIndex: undefined,
        label: undefined,
        jobName: undefined,
        recordedAt: T0 - 60_000,
        firstPollAt: T0 - 60_000 + THIRTY_MINUTES + i,
      })),
      'cursor',
      '2',
      T0 - 60_000,
    );
    return ['job_1', ...ids];
  }

  it('polls every unfinished job within the first minute, spread over it, not at the time saved before the stop', async () => {
    const ids = await backlog();
    const f = makeFollower();
    f.start();
    await startWebhooks(f);
    const times = async () => Promise.all(ids.map((id) => nextPoll(id)));
    await waitFor(async () => (await times()).every((t) => t < T0 + CATCH_UP_SPREAD_MS));
    const due = await times();
    expect(Math.min(...due)).toBe(T0);
    expect(Math.max(...due)).toBeLessThan(T0 + CATCH_UP_SPREAD_MS);
    // Spread: one job per slot of a minute's share, not a burst at the same instant.
    expect(new Set(due).size).toBe(ids.length);
    expect((await store.dueJobs(T0, 100)).length).toBe(1);
    const byHalf = (await store.dueJobs(T0 + CATCH_UP_SPREAD_MS / 2, 100)).length;
    expect(byHalf).toBeGreaterThanOrEqual(Math.floor(ids.length / 2));
    expect(byHalf).toBeLessThanOrEqual(Math.ceil(ids.length / 2) + 1);
  });

  it('keeps the saved next polls when the follower starts without webhooks', async () => {
    const ids = await backlog();
    // Every step of the loop asks the store for the documents due: a few steps, counted.
    let steps = 0;
    const dueDocuments = store.dueDocuments.bind(store);
    store.dueDocuments = (now, limit) => {
      steps++;
      return dueDocuments(now, limit);
    };
    const f = makeFollower();
    f.start();
    await waitFor(() => steps >= 3);
    for (const id of ids) expect(await nextPoll(id)).toBeGreaterThan(T0 + THIRTY_MINUTES - 60_001);
  });
});
