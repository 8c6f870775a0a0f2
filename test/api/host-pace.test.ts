/**
 * The pace of one service host shared by the intake (each attempt takes a place) and the return
 * path (the follower's gate): a fake clock moved by hand, real sleeps of a few ms.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { folderPaceKey, HostPace } from '../../src/api/host-pace.js';
import { Pacing, StartLog } from '../../src/api/pacing.js';
import { retryPolicy } from '../../src/api/retry.js';
import { withRetry } from '../../src/api/retry-loop.js';
import { ManualClock } from '../../src/core/clock.js';
import { isDocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { failureClass } from '../../src/domain/retry-policy.js';
import { classifyFailure } from '../../src/pipeline/retry-policy.js';
import { CallGate, RETURNS_KEY } from '../../src/returns/call-gate.js';

const TOO_MANY_5S = { ok: false, status: 429, retryAfterMs: 5000 };

/** Lets the pace's short sleeps run a few times. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 3));
}

/** Whether `promise` settled yet. */
function watch<T>(promise: Promise<T>): { settled: () => boolean; value: Promise<T> } {
  let settled = false;
  const value = promise.finally(() => {
    settled = true;
  });
  return { settled: () => settled, value };
}

function pace(clock: ManualClock, pacing = new Pacing({ concurrency: 'auto' }), observer = {}) {
  return new HostPace(clock, pacing, silentLogger(), { maxSleepMs: 2, observer });
}

describe('host pace shared by the intake and the return path', () => {
  it("one intake call answered 429 Retry-After: 5 s holds the return path's next call (and the intake's) until the clock passes it", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const gate = new CallGate(host);
    const intake = host.attempts({ caller: 'intake', key: folderPaceKey('pdf') });
    const done = await intake.begin();
    done(TOO_MANY_5S);

    const follower = watch(gate.take({}));
    const nextIntake = watch(intake.begin());
    await turns();
    expect(follower.settled()).toBe(false);
    expect(nextIntake.settled()).toBe(false);
    clock.advance(4999);
    await turns();
    expect(follower.settled()).toBe(false);
    clock.advance(1);
    await follower.value;
    (await nextIntake.value)({ ok: true });
  });

  it("a 429 Retry-After heard by the return path holds the intake's calls too", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const gate = new CallGate(host);
    (await gate.take({})).onAttempt({ ok: false, status: 503, retryAfterMs: 5000 });
    const intake = watch(host.attempts({ caller: 'intake' }).begin());
    await turns();
    expect(intake.settled()).toBe(false);
    clock.advance(5000);
    (await intake.value)({ ok: true });
  });

  it("the intake's attempts take places: past the limit the next waits for one to end, and a 429 halves the places of both callers", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const gate = new CallGate(host);
    const intake = host.attempts({ caller: 'intake' });
    const ends = await Promise.all([1, 2, 3, 4].map(() => intake.begin()));
    expect(host.inFlight()).toBe(4);
    const fifth = watch(intake.begin());
    await turns();
    expect(fifth.settled()).toBe(false);
    ends[0]!({ ok: true });
    const fifthEnd = await fifth.value;
    expect(host.inFlight()).toBe(4);

    ends[1]!({ ok: false, status: 429 });
    expect(host.pacing.limit()).toBe(2);
    expect(gate.limit()).toBe(2);
    for (const end of [ends[2]!, ends[3]!, fifthEnd]) end({ ok: true });
    expect(host.inFlight()).toBe(0);
  });

  it("the return path's tasks hold places the intake then waits for", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock, new Pacing({ concurrency: 2 }));
    const releases = [host.hold(), host.hold()];
    expect(host.free()).toBe(0);
    const intake = watch(host.attempts({ caller: 'intake' }).begin());
    await turns();
    expect(intake.settled()).toBe(false);
    releases[0]!.release();
    // Released twice, freed once.
    releases[0]!.release();
    (await intake.value)({ ok: true });
    expect(host.inFlight()).toBe(1);
  });

  it("a return path task's place is let go while its call waits for the follower's budget, for the intake, and taken again with its turn", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock, new Pacing({ concurrency: 1 }));
    host.pacing.limitKey(RETURNS_KEY, [new StartLog(1)]);
    const gate = new CallGate(host);
    const place = host.hold();
    const task = gate.holding(place);
    // The budget's one call of the minute starts at once, in the task's place.
    (await task.take({})).onAttempt({ ok: true });
    expect(host.inFlight()).toBe(1);
    // The next waits for the budget, without the place: the intake's call takes it meanwhile.
    const next = watch(task.take({}));
    await turns();
    expect(next.settled()).toBe(false);
    expect(place.isTaken()).toBe(false);
    expect(host.inFlight()).toBe(0);
    const intake = await host.attempts({ caller: 'intake' }).begin();
    expect(host.inFlight()).toBe(1);
    // The budget allows it again, but the one place is the intake's until its call ends.
    clock.advance(60_000);
    await turns();
    expect(next.settled()).toBe(false);
    intake({ ok: true });
    (await next.value).onAttempt({ ok: true });
    expect(place.isTaken()).toBe(true);
    expect(host.inFlight()).toBe(1);
    place.release();
    expect(host.inFlight()).toBe(0);
  });

  it("a return path task's call that needs no wait keeps its place", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock, new Pacing({ concurrency: 1 }));
    const place = host.hold();
    const intake = watch(host.attempts({ caller: 'intake' }).begin());
    (await new CallGate(host).holding(place).take({})).onAttempt({ ok: true });
    await turns();
    expect(place.isTaken()).toBe(true);
    expect(intake.settled()).toBe(false);
    place.release();
    (await intake.value)({ ok: true });
  });

  it('grows by one per round of good answers while a backlog keeps every place taken', async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const intake = host.attempts({ caller: 'intake' });
    const inFlight = await Promise.all([1, 2, 3, 4].map(() => intake.begin()));
    // Three rounds: each answer is followed by the next attempt of the backlog.
    for (const limit of [4, 5, 6]) {
      for (let i = 0; i < limit; i++) {
        inFlight.shift()!({ ok: true });
        inFlight.push(await intake.begin());
      }
      while (inFlight.length < host.pacing.limit()) inFlight.push(await intake.begin());
    }
    expect(host.pacing.limit()).toBe(7);
    for (const end of inFlight) end({ ok: true });
  });

  it('does not grow while the places are not all in use', async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const intake = host.attempts({ caller: 'intake' });
    for (let i = 0; i < 100; i++) (await intake.begin())({ ok: true });
    expect(host.pacing.limit()).toBe(4);
  });

  it("a folder's rate holds that folder's calls only, and a reload's new rate replaces it", async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const slow = folderPaceKey('slow');
    host.rateOf(slow, { count: 1, perMs: 60_000 });
    (await host.attempts({ caller: 'intake', key: slow }).begin())({ ok: true });
    const second = watch(host.attempts({ caller: 'intake', key: slow }).begin());
    // Another folder is not held.
    (await host.attempts({ caller: 'intake', key: folderPaceKey('fast') }).begin())({ ok: true });
    await turns();
    expect(second.settled()).toBe(false);
    // Same rate again (each call sets it): the bucket is kept, the wait goes on.
    host.rateOf(slow, { count: 1, perMs: 60_000 });
    await turns();
    expect(second.settled()).toBe(false);
    host.rateOf(slow, undefined);
    (await second.value)({ ok: true });
  });

  it('tells the observer how long each caller waited and each 429/503', async () => {
    const clock = new ManualClock(0);
    const waits: { caller: string; seconds: number }[] = [];
    const backoffs: { caller: string; status: number }[] = [];
    const host = pace(clock, new Pacing({ concurrency: 'auto' }), {
      paceWait: (e: { caller: string; seconds: number }) => waits.push(e),
      paceBackoff: (e: { caller: string; status: number }) => backoffs.push(e),
    });
    const gate = new CallGate(host);
    (await host.attempts({ caller: 'intake' }).begin())(TOO_MANY_5S);
    const follower = gate.take({});
    await turns();
    clock.advance(5000);
    (await follower).onAttempt({ ok: false, status: 503 });
    expect(backoffs).toEqual([
      { caller: 'intake', status: 429 },
      { caller: 'returns', status: 503 },
    ]);
    expect(waits).toEqual([{ caller: 'returns', seconds: 5 }]);
  });

  it('every attempt of a retried call waits its turn, and one cut short frees its place', async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const attempts: number[] = [];
    const calls = withRetry(
      {
        policy: retryPolicy({ random: () => 0 }),
        clock,
        log: silentLogger(),
        method: 'GET',
        route: '/jobs',
        retryable: true,
        sleep: async () => {},
        pace: host.attempts({ caller: 'intake' }),
      },
      async (n) => {
        attempts.push(clock.now());
        expect(host.inFlight()).toBe(1);
        if (n === 1)
          throw new ApiError('DOCEX_API_503', 'unavailable', { status: 503, method: 'GET', route: '/jobs' });
        return 'ok';
      },
    );
    await expect(calls).resolves.toBe('ok');
    expect(attempts).toHaveLength(2);
    expect(host.inFlight()).toBe(0);

    const abort = new AbortController();
    const cut = withRetry(
      {
        policy: retryPolicy({ random: () => 0 }),
        clock,
        log: silentLogger(),
        method: 'GET',
        route: '/jobs',
        retryable: true,
        signal: abort.signal,
        pace: host.attempts({ caller: 'intake' }),
      },
      async () => {
        abort.abort();
        throw new Error('aborted');
      },
    );
    await expect(cut).rejects.toThrow('aborted');
    expect(host.inFlight()).toBe(0);
  });

  it('a create whose turn does not come before its signal ends (its lease allowance) is not sent and fails as a wait, neither internal nor maybe sent', async () => {
    const clock = new ManualClock(0);
    const host = pace(clock);
    const paused = await host.attempts({ caller: 'intake' }).begin();
    paused(TOO_MANY_5S);
    const deadline = new AbortController();
    let sent = 0;
    const create = watch(
      withRetry(
        {
          policy: retryPolicy({ random: () => 0 }),
          clock,
          log: silentLogger(),
          method: 'POST',
          route: '/jobs/single-file',
          retryable: false,
          signal: deadline.signal,
          pace: host.attempts({ caller: 'intake', key: folderPaceKey('pdf') }),
        },
        async () => {
          sent++;
          return 'job';
        },
      ).catch((err: unknown) => err),
    );
    await turns();
    expect(create.settled()).toBe(false);
    // The lease's allowance ends while the Retry-After still holds the host.
    deadline.abort(new DOMException('the lease allowance ended', 'TimeoutError'));
    const err = await create.value;
    expect(sent).toBe(0);
    expect(host.inFlight()).toBe(0);
    expect(isDocexError(err, 'DOCEX_PACE_TURN_LATE')).toBe(true);
    // Not a bug (parked after INTERNAL_TRY_LIMIT tries) and not a request that may have reached the service.
    expect((err as Error).name).not.toMatch(/^(AbortError|TimeoutError)$/);
    expect(classifyFailure(err, 'create')).toMatchObject({ kind: 'retry', code: 'DOCEX_PACE_TURN_LATE' });
    expect(failureClass('DOCEX_PACE_TURN_LATE')).toBe('waiting');
  });
});
