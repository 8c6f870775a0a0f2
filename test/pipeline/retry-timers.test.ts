/**
 * The retry timers: after a failed try, the retry policy's wait (a timer that resumes the item) or
 * its give-up (park), with the count of tries in a row and the next try's time kept in a real
 * journal, so a restart continues each file's backoff. Timers are vitest's fake ones, advanced by
 * the test; the journal's clock is a manual one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { defaultRetryDelay, INTERNAL_TRY_LIMIT } from '../../src/domain/retry-policy.js';
import type { JournalItem } from '../../src/journal/index.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { RetryTimers } from '../../src/pipeline/retry-timers.js';

const transient = () => new DocexError('DOCEX_API_503', 'service unavailable');
const bug = () => new Error('a bug');

let dir: string;
let journal: SqliteJournal;
let clock: ManualClock;
let files = 0;

/** A claimed file item of `folder`, as the journal has it. */
async function claimed(folder = 'invoices'): Promise<JournalItem> {
  files++;
  const result = await journal.recordClaim({
    folder,
    sourcePath: `/in/${folder}/f${files}.pdf`,
    claimedPath: `/in/${folder}/.processing/f${files}.pdf`,
    fileName: `f${files}.pdf`,
    size: 1,
    mtimeMs: 1,
    sha256: files.toString(16).padStart(64, '0'),
    workflowId: 'wf',
    mode: 'single-file',
  });
  return result.item;
}

const fresh = async (item: JournalItem) => (await journal.get(item.id))!;

function makeTimers(retryDelayMs?: (n: number) => number) {
  const resumed: number[] = [];
  let fired = 0;
  const timers = new RetryTimers({
    journal,
    clock,
    log: silentLogger(),
    ...(retryDelayMs ? { retryDelayMs } : {}),
    resume: (itemId) => resumed.push(itemId),
    onFired: () => fired++,
  });
  return { timers, resumed, firedCount: () => fired };
}

const neverParks = async () => false;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-retry-'));
  clock = new ManualClock();
  journal = SqliteJournal.open(path.join(dir, 'journal.sqlite'), { clock, log: silentLogger() });
});
afterEach(async () => {
  vi.useRealTimers();
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('RetryTimers', () => {
  it('resumes a file that failed with a transient error after the policy’s wait, and not before', async () => {
    const { timers, resumed, firedCount } = makeTimers();
    const item = await claimed();
    await timers.failed(item, transient(), neverParks);
    expect(timers.waiting).toBe(1);
    vi.advanceTimersByTime(defaultRetryDelay(1) - 1);
    expect(resumed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(resumed).toEqual([item.id]);
    expect(firedCount()).toBe(1);
    expect(timers.waiting).toBe(0);
  });

  it('records each failed try in the journal: the count in a row, its code and when the next try is due', async () => {
    const { timers } = makeTimers((n) => 1_000 * n);
    const item = await claimed();
    await timers.failed(item, transient(), neverParks);
    await timers.failed(await fresh(item), transient(), neverParks);
    expect(await fresh(item)).toMatchObject({
      failedTries: 2,
      lastFailureCode: 'DOCEX_API_503',
      nextTryAt: clock.now() + 2_000,
    });
  });

  it('waits longer with each failed try in a row, as the given delay says', async () => {
    const asked: number[] = [];
    const { timers } = makeTimers((n) => {
      asked.push(n);
      return 10 * n;
    });
    const item = await claimed();
    for (let i = 0; i < 3; i++) {
      await timers.failed(await fresh(item), transient(), neverParks);
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
    const item = await claimed();
    for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
      await timers.failed(await fresh(item), bug(), park);
      vi.runAllTimers();
    }
    expect(reasons).toEqual([]);
    await timers.failed(await fresh(item), bug(), park);
    expect(reasons).toEqual([`${INTERNAL_TRY_LIMIT} tries in a row failed (DOCEX_INTERNAL: a bug)`]);
    expect(timers.waiting).toBe(0);
  });

  it('counts the tries in a row from one again after a success (reset), in the journal too', async () => {
    const { timers } = makeTimers(() => 1);
    const reasons: string[] = [];
    const park = async (reason: string) => reasons.push(reason) > 0;
    const item = await claimed();
    for (let round = 0; round < 3; round++) {
      for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
        await timers.failed(await fresh(item), bug(), park);
        vi.runAllTimers();
      }
      await timers.reset(await fresh(item));
      expect(await fresh(item)).toMatchObject({ failedTries: 0, nextTryAt: undefined });
    }
    expect(reasons).toEqual([]);
  });

  it('waits and tries again when parking fails (a full disk), with the default growing delay', async () => {
    const { timers, resumed } = makeTimers(() => 1);
    const item = await claimed();
    for (let i = 1; i < INTERNAL_TRY_LIMIT; i++) {
      await timers.failed(await fresh(item), bug(), neverParks);
      vi.runAllTimers();
    }
    resumed.length = 0;
    await timers.failed(await fresh(item), bug(), neverParks);
    expect(timers.waiting).toBe(1);
    vi.advanceTimersByTime(defaultRetryDelay(INTERNAL_TRY_LIMIT) - 1);
    expect(resumed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(resumed).toEqual([item.id]);
  });

  it('continues a wait recorded before a restart with the time left, and the count where it was', async () => {
    const before = makeTimers(() => 60_000);
    const item = await claimed();
    await before.timers.failed(item, transient(), neverParks);
    before.timers.cancelAll();
    clock.advance(20_000);

    const after = makeTimers((n) => 60_000 * n);
    expect(after.timers.resumeAt(await fresh(item))).toBe(true);
    vi.advanceTimersByTime(40_000 - 1);
    expect(after.resumed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(after.resumed).toEqual([item.id]);
    await after.timers.failed(await fresh(item), transient(), neverParks);
    expect(await fresh(item)).toMatchObject({ failedTries: 2, nextTryAt: clock.now() + 120_000 });
  });

  it('resumes at once (resumeAt false) an item whose recorded wait is over, or that never waited', async () => {
    const { timers } = makeTimers(() => 1_000);
    const waited = await claimed();
    await timers.failed(waited, transient(), neverParks);
    timers.cancelAll();
    clock.advance(1_000);
    expect(timers.resumeAt(await fresh(waited))).toBe(false);
    expect(timers.resumeAt(await claimed())).toBe(false);
    expect(timers.waiting).toBe(0);
  });

  it('still waits and resumes when the journal cannot record the failed try', async () => {
    const { timers, resumed } = makeTimers(() => 5);
    const item = await claimed();
    await journal.close();
    await timers.failed(item, transient(), neverParks);
    vi.advanceTimersByTime(5);
    expect(resumed).toEqual([item.id]);
    journal = SqliteJournal.open(path.join(dir, 'journal.sqlite'), { clock, log: silentLogger() });
  });

  it('cancels the waits of one folder only, and every wait on cancelAll', async () => {
    const { timers, resumed } = makeTimers(() => 1_000);
    const [a1, b2, a3, b4] = [await claimed('a'), await claimed('b'), await claimed('a'), await claimed('b')];
    await timers.failed(a1!, transient(), neverParks);
    await timers.failed(b2!, transient(), neverParks);
    await timers.failed(a3!, transient(), neverParks);
    timers.cancel('a');
    expect(timers.waiting).toBe(1);
    vi.runAllTimers();
    expect(resumed).toEqual([b2!.id]);
    await timers.failed(b4!, transient(), neverParks);
    timers.cancelAll();
    vi.runAllTimers();
    expect(resumed).toEqual([b2!.id]);
    expect(timers.waiting).toBe(0);
  });
});
