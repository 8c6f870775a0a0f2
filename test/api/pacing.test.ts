import { describe, expect, it } from 'vitest';
import { HostPace } from '../../src/api/host-pace.js';
import { AUTO_CEILING, AUTO_START, Pacing, StartLog, TokenBucket } from '../../src/api/pacing.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { CallGate } from '../../src/returns/call-gate.js';

const OK = { ok: true };
const TOO_MANY = { ok: false, status: 429 };
const UNAVAILABLE = { ok: false, status: 503 };

/** `n` calls started and answered `outcome` one after the other, all with the limit in use. */
function answerMany(p: Pacing, n: number, outcome: { ok: boolean; status?: number }, now = 0) {
  for (let i = 0; i < n; i++) p.answered(p.started(now), outcome, now, true);
}

describe('pacing (additive increase, multiplicative decrease)', () => {
  it('auto starts at 4 in flight and grows by one per round of good answers while the limit is in use', () => {
    const p = new Pacing({ concurrency: 'auto' });
    expect(p.limit()).toBe(AUTO_START);
    answerMany(p, 4, OK);
    expect(p.limit()).toBe(5);
    answerMany(p, 5, OK);
    expect(p.limit()).toBe(6);
  });

  it('does not grow on good answers while fewer calls than the limit are in flight', () => {
    const p = new Pacing({ concurrency: 'auto' });
    for (let i = 0; i < 100; i++) p.answered(p.started(0), OK, 0, false);
    expect(p.limit()).toBe(AUTO_START);
  });

  it('auto grows no further than its ceiling', () => {
    const p = new Pacing({ concurrency: 'auto' });
    answerMany(p, 10_000, OK);
    expect(p.limit()).toBe(AUTO_CEILING);
  });

  it('halves on 429 and on 503, never below one', () => {
    const p = new Pacing({ concurrency: 'auto' });
    answerMany(p, 200, OK);
    const grown = p.limit();
    expect(grown).toBeGreaterThan(16);
    answerMany(p, 1, TOO_MANY);
    expect(p.limit()).toBe(Math.floor(grown / 2));
    answerMany(p, 1, UNAVAILABLE);
    expect(p.limit()).toBe(Math.floor(grown / 4));
    answerMany(p, 20, UNAVAILABLE);
    expect(p.limit()).toBe(1);
  });

  it('halves once for a burst of 429s to calls that started before the first of them', () => {
    const p = new Pacing({ concurrency: 16 });
    const tickets = Array.from({ length: 16 }, () => p.started(0));
    for (const t of tickets) p.answered(t, TOO_MANY, 0, true);
    expect(p.limit()).toBe(8);
    // A call started after the halving that is refused again halves again.
    p.answered(p.started(0), TOO_MANY, 0, true);
    expect(p.limit()).toBe(4);
  });

  it('leaves the limit alone on other failures (500, no answer): those are not the service asking for less', () => {
    const p = new Pacing({ concurrency: 8 });
    answerMany(p, 5, { ok: false, status: 500 });
    answerMany(p, 5, { ok: false });
    expect(p.limit()).toBe(8);
  });

  it('a fixed concurrency is a cap: it starts there, halves on 429 and grows back to it, not past it', () => {
    const p = new Pacing({ concurrency: 6 });
    expect(p.limit()).toBe(6);
    answerMany(p, 1, TOO_MANY);
    expect(p.limit()).toBe(3);
    answerMany(p, 1000, OK);
    expect(p.limit()).toBe(6);
  });

  it('holds every call until the time a Retry-After names, then lets them start', () => {
    const p = new Pacing({ concurrency: 'auto' });
    expect(p.waitMs(1000)).toBe(0);
    p.answered(p.started(1000), { ...TOO_MANY, retryAfterMs: 30_000 }, 1000, true);
    expect(p.waitMs(1000)).toBe(30_000);
    expect(p.waitMs(21_000)).toBe(10_000);
    // A shorter Retry-After later does not cut the pause short.
    p.answered(p.started(21_000), { ...UNAVAILABLE, retryAfterMs: 1000 }, 21_000, true);
    expect(p.waitMs(21_000)).toBe(10_000);
    expect(p.waitMs(31_000)).toBe(0);
  });

  it('ignores a Retry-After on an answer that is not 429 or 503', () => {
    const p = new Pacing({ concurrency: 'auto' });
    p.answered(p.started(0), { ok: false, status: 500, retryAfterMs: 30_000 }, 0, true);
    expect(p.waitMs(0)).toBe(0);
  });

  it('with maxCallsPerMinute, starts at most that many calls in any 60 s', () => {
    const p = new Pacing({ concurrency: 'auto', maxCallsPerMinute: 3 });
    for (let i = 0; i < 3; i++) {
      expect(p.waitMs(i * 10_000)).toBe(0);
      p.started(i * 10_000);
    }
    expect(p.waitMs(30_000)).toBe(30_000);
    expect(p.waitMs(60_000)).toBe(0);
  });

  it('without maxCallsPerMinute, sets no budget', () => {
    const p = new Pacing({ concurrency: 'auto' });
    for (let i = 0; i < 100_000; i++) p.started(0);
    expect(p.waitMs(0)).toBe(0);
  });
});

/**
 * Starts as many calls as `p` lets through, each at the first instant it allows, on a simulated
 * clock from 0 to `untilMs`; answers their start times.
 */
function startGreedily(p: Pacing, untilMs: number, key?: string): number[] {
  const starts: number[] = [];
  for (let now = 0; now < untilMs; ) {
    const wait = p.waitMs(now, key);
    if (wait > 0) {
      now += wait;
      continue;
    }
    p.started(now, key);
    starts.push(now);
  }
  return starts;
}

describe('pacing rates (token bucket)', () => {
  it.each([
    ['600/min', { count: 600, perMs: 60_000 }],
    ['10/s', { count: 10, perMs: 1000 }],
    ['7/min', { count: 7, perMs: 60_000 }],
    ['100000/h', { count: 100_000, perMs: 3_600_000 }],
  ])('lets %s through within 2 %% over a simulated 60 s, started as early as it allows', (_, rate) => {
    const p = new Pacing({ concurrency: 'auto', rate });
    const expected = (rate.count * 60_000) / rate.perMs;
    const starts = startGreedily(p, 60_000);
    expect(starts.length).toBeGreaterThanOrEqual(Math.floor(expected * 0.98));
    expect(starts.length).toBeLessThanOrEqual(Math.ceil(expected * 1.02));
  });

  it('never lets a burst through: no second of the 60 s passes more than a hundredth of a minute over the rate', () => {
    const p = new Pacing({ concurrency: 'auto', rate: { count: 6000, perMs: 60_000 } });
    const starts = startGreedily(p, 60_000);
    for (let from = 0; from < 60_000; from += 1000) {
      const inSecond = starts.filter((t) => t >= from && t < from + 1000).length;
      expect(inSecond).toBeLessThanOrEqual(100 + 60);
    }
  });

  it('a rate of an hour still passes no burst of a minute: 100000/h lets at most 1 % more through a minute', () => {
    const p = new Pacing({ concurrency: 'auto', rate: { count: 100_000, perMs: 3_600_000 } });
    expect(startGreedily(p, 60_000).length).toBeLessThanOrEqual(Math.ceil((100_000 / 60) * 1.01));
  });

  it("a key's rate bounds only the calls of that key, under the rate of every call", () => {
    const p = new Pacing({ concurrency: 'auto', rate: { count: 600, perMs: 60_000 } });
    p.limitKey('folder:slow', [new TokenBucket({ count: 60, perMs: 60_000 })]);
    expect(startGreedily(p, 60_000, 'folder:slow').length).toBeLessThanOrEqual(Math.ceil(60 * 1.02));
    const q = new Pacing({ concurrency: 'auto', rate: { count: 600, perMs: 60_000 } });
    q.limitKey('folder:slow', [new TokenBucket({ count: 60, perMs: 60_000 })]);
    // Calls of another key (or of none) are held by the global rate only.
    expect(startGreedily(q, 60_000, 'folder:fast').length).toBeGreaterThanOrEqual(588);
  });

  it("a key's starts count against the rate of every call: a fast folder leaves the rest to others", () => {
    const p = new Pacing({ concurrency: 'auto', rate: { count: 600, perMs: 60_000 } });
    const a = startGreedily(p, 30_001, 'folder:a');
    // Folder a took every start up to 30 s: the next call of any key waits for the refill.
    expect(a.length).toBeGreaterThanOrEqual(294);
    expect(p.waitMs(30_001, 'folder:b')).toBeGreaterThan(0);
    expect(p.waitMs(30_100, 'folder:b')).toBe(0);
  });

  it('a Retry-After holds the calls of every key, whatever their rates', () => {
    const p = new Pacing({ concurrency: 'auto' });
    p.limitKey('returns', [new StartLog(1000)]);
    p.answered(p.started(0, 'folder:a'), { ...TOO_MANY, retryAfterMs: 5000 }, 0, true);
    expect(p.waitMs(0, 'returns')).toBe(5000);
    expect(p.waitMs(0, 'folder:b')).toBe(5000);
    expect(p.waitMs(0)).toBe(5000);
    expect(p.waitMs(5000, 'returns')).toBe(0);
  });

  it('a start log lets at most its max start in any window, then the oldest start frees a place', () => {
    const log = new StartLog(2, 1000);
    log.started(0);
    log.started(100);
    expect(log.waitMs(500)).toBe(500);
    expect(log.waitMs(1000)).toBe(0);
  });
});

describe('call gate', () => {
  it('holds a call until the clock passes the Retry-After, and tells the pacing how each attempt went', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate(
      new HostPace(clock, new Pacing({ concurrency: 8 }), silentLogger(), { maxSleepMs: 2 }),
    );
    const first = await gate.take({});
    first.onAttempt({ ok: false, status: 429, retryAfterMs: 5000 });
    expect(gate.pacing.limit()).toBe(4);
    let started = false;
    const second = gate.take({}).then((o) => {
      started = true;
      return o;
    });
    // The loop sleeps in real ms steps of 2 and looks at the clock each time: give it a few turns.
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
    expect(started).toBe(false);
    clock.advance(5000);
    await second;
    expect(started).toBe(true);
  });

  it('stops waiting when aborted', async () => {
    const clock = new ManualClock(0);
    const gate = new CallGate(
      new HostPace(clock, new Pacing({ concurrency: 'auto', maxCallsPerMinute: 1 }), silentLogger(), {
        maxSleepMs: 2,
      }),
    );
    await gate.take({});
    const abort = new AbortController();
    const waiting = gate.take({ signal: abort.signal });
    abort.abort();
    await expect(waiting).rejects.toThrow();
  });
});
