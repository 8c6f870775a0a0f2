import { describe, expect, it } from 'vitest';
import { cronPlan } from '../../src/returns/cron-next.js';
import {
  firstPollAt,
  followExpired,
  nextPollAt,
  pollInterval,
  retryAt,
} from '../../src/returns/follow-plan.js';

const timing = {
  firstPollMs: 10_000,
  minIntervalMs: 15_000,
  maxIntervalMs: 15 * 60_000,
  intervalWhileWebhooksMs: 30 * 60_000,
  maxFollowMs: 30 * 86_400_000,
};

describe('follow plan', () => {
  it('polls a new job soon, then doubles the interval while nothing changes, up to the maximum', () => {
    expect(firstPollAt(1_000, timing)).toBe(11_000);
    expect([0, 1, 2, 3, 6, 40].map((n) => pollInterval(n, false, timing))).toEqual([
      15_000, 30_000, 60_000, 120_000, 900_000, 900_000,
    ]);
    expect(nextPollAt({ now: 100, followedSince: 0, unchangedPolls: 0, webhooksActive: false }, timing)).toBe(
      15_100,
    );
  });

  it('polls only as the safety net while webhooks arrive', () => {
    expect(pollInterval(0, true, timing)).toBe(30 * 60_000);
  });

  it('gives a job up only after maxFollowMs, and spaces download retries like polls', () => {
    expect(followExpired(0, timing.maxFollowMs, timing)).toBe(false);
    expect(followExpired(0, timing.maxFollowMs + 1, timing)).toBe(true);
    expect(retryAt(0, 1, timing)).toBe(15_000);
    expect(retryAt(0, 3, timing)).toBe(60_000);
  });
});

describe('cron plan (injected clock, node-cron fields)', () => {
  const at = (iso: string) => new Date(iso).getTime();
  const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0) =>
    new Date(y, mo - 1, d, h, mi, s).getTime();

  it('finds the next firing of a daily, a seconds and a weekday expression', () => {
    expect(cronPlan('5 0 * * *').next(local(2026, 11, 21, 10))).toBe(local(2026, 11, 22, 0, 5));
    expect(cronPlan('5 0 * * *').next(local(2026, 11, 22, 0, 5))).toBe(local(2026, 11, 23, 0, 5));
    expect(cronPlan('*/10 * * * * *').next(local(2026, 11, 21, 10, 0, 1))).toBe(
      local(2026, 11, 21, 10, 0, 10),
    );
    // 2026-11-21 is a Saturday: next weekday 09:00 is Monday the 23rd.
    expect(cronPlan('0 9 * * 1-5').next(local(2026, 11, 21, 12))).toBe(local(2026, 11, 23, 9));
    expect(cronPlan('0 0 L * *').next(local(2026, 2, 3))).toBe(local(2026, 2, 28));
    expect(cronPlan('* * * * * *').next(at('2026-11-21T10:00:00.500Z'))).toBe(at('2026-11-21T10:00:01.000Z'));
  });
});
