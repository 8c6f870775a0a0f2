/**
 * The retry timers alone: after a failed try, the retry policy's wait (a timer that resumes the
 * item) or its give-up (park). Timers are vitest's fake ones, advanced by the test.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { defaultRetryDelay, INTERNAL_TRY_LIMIT } from '../../src/domain/retry-policy.js';
import type { JournalItem } from '../../src/journal/index.js';
import { RetryTimers } from '../../src/pipeline/retry-timers.js';

const itemOf = (id: number, folder = 'invoices') => ({ id, folder, fileName: `f${id}.pdf` }) as JournalItem;
const transient = () => new DocexError('DOCEX_API_503', 'service unavailable');
const bug = () => new Error('a bug');

function makeTimers(retryDelayMs?: (n: number) => number) {
  const resumed: number[] = [];
  let fired = 0;
  const timers = new RetryTimers({
    log: silentLogger(),
    ...(retryDelayMs ? { retryDelayMs } : {}),
    resume: (itemId) => resumed.push(itemId),
    onFired: () => fired++,
  });
  return { timers, resumed, firedCount: () => fired };
}

const neverParks = async () => false;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RetryTimers', () => {
  it('resumes a file that failed with a transient error after the policy’s wait, and not before', async () => {
    const { timers, resumed, firedCount } = makeTimers();
    await timers.failed(itemOf(1), transient(), neverParks);
    expect(timers.waiting).toBe(1);
    vi.advanceTimersByTime(defaultRetryDelay(1) - 1);
    expect(resumed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(resumed).toEqual([1]);
    expect(firedCount()).toBe(1);
    expect(timers.waiting).toBe(0);
  });

  it('waits longer with each failed try in a row, as the given delay says', async () => {
    const asked: number[] = [];
    const { timers } = makeTimers((n) => {
      asked.push(n);
      return 10 * n;
    });
    for (let i = 0; i < 3; i++) {
      await timers.failed(itemOf(1), transient(), neverParks);
      vi.runAllTimers();
    }
    expect(asked).toEqual([1, 2, 3]);
  });

  it('parks a file after INTERNAL_TRY_LIMIT internal failures in a row, with the count and the error in the reason', async () => {
    const { timers } = makeTimers(() => 1);
    const reasons: string[] = [];
    const park = async (reason: string) => {
      reasons.push(reason);
      return true;
    };
    for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
      await timers.failed(itemOf(7), bug(), park);
      vi.runAllTimers();
    }
    expect(reasons).toEqual([]);
    await timers.failed(itemOf(7), bug(), park);
    expect(reasons).toEqual([`${INTERNAL_TRY_LIMIT} tries in a row failed (DOCEX_INTERNAL: a bug)`]);
    expect(timers.waiting).toBe(0);
    // Parked: a file of the same id failing again starts a new count.
    await timers.failed(itemOf(7), bug(), park);
    expect(reasons).toHaveLength(1);
  });

  it('counts the tries in a row from one again after a success (reset)', async () => {
    const { timers } = makeTimers(() => 1);
    const reasons: string[] = [];
    const park = async (reason: string) => reasons.push(reason) > 0;
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
        await timers.failed(itemOf(2), bug(), park);
        vi.runAllTimers();
      }
      timers.reset(2);
    }
    expect(reasons).toEqual([]);
  });

  it('waits and tries again when parking fails (a full disk), with the default growing delay', async () => {
    const { timers, resumed } = makeTimers(() => 1);
    for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
      await timers.failed(itemOf(3), bug(), neverParks);
      vi.runAllTimers();
    }
    resumed.length = 0;
    await timers.failed(itemOf(3), bug(), neverParks);
    expect(timers.waiting).toBe(1);
    vi.advanceTimersByTime(defaultRetryDelay(INTERNAL_TRY_LIMIT) - 1);
    expect(resumed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(resumed).toEqual([3]);
  });

  it('cancels the waits of one folder only, and every wait on cancelAll', async () => {
    const { timers, resumed } = makeTimers(() => 1_000);
    await timers.failed(itemOf(1, 'a'), transient(), neverParks);
    await timers.failed(itemOf(2, 'b'), transient(), neverParks);
    await timers.failed(itemOf(3, 'a'), transient(), neverParks);
    timers.cancel('a');
    expect(timers.waiting).toBe(1);
    vi.runAllTimers();
    expect(resumed).toEqual([2]);
    await timers.failed(itemOf(4, 'b'), transient(), neverParks);
    timers.cancelAll();
    vi.runAllTimers();
    expect(resumed).toEqual([2]);
    expect(timers.waiting).toBe(0);
  });
});
