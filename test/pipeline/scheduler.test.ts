/**
 * The scheduler alone: which task runs when, how many at once, per folder and across folders.
 * Tasks are promises the test settles, so every assertion is about order and counts, not time.
 */
import { describe, expect, it } from 'vitest';
import { backlogHighMark, priorityOf, Scheduler } from '../../src/pipeline/scheduler.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';

function folderOf(name: string, concurrency: number): FolderRuntime {
  return { config: { name, concurrency } } as unknown as FolderRuntime;
}

/** A task that runs until the test releases it, recording its start. */
class Gate {
  readonly started: string[] = [];
  private readonly releases = new Map<string, () => void>();
  inFlight = 0;
  maxInFlight = 0;

  task(name: string): () => Promise<void> {
    return () => {
      this.started.push(name);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      return new Promise<void>((resolve) => {
        this.releases.set(name, () => {
          this.inFlight--;
          resolve();
        });
      });
    };
  }

  release(name: string): void {
    this.releases.get(name)?.();
  }

  releaseAll(): void {
    for (const name of [...this.releases.keys()]) this.release(name);
  }
}

/** Lets p-queue start what it may (its starts are chained on microtasks). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function makeScheduler(folders: FolderRuntime[], concurrency: number) {
  const backlog: Array<[string, boolean]> = [];
  const errors: Array<[string, unknown]> = [];
  let settled = 0;
  const scheduler = new Scheduler({
    concurrency,
    folders: new Map(folders.map((runtime) => [runtime.config.name, runtime])),
    onBacklog: (folder, full) => backlog.push([folder, full]),
    onTaskError: (folder, err) => errors.push([folder, err]),
    onSettled: () => settled++,
  });
  return { scheduler, backlog, errors, settledCount: () => settled };
}

describe('Scheduler', () => {
  it('runs at most a folder’s concurrency at once, and at most the global concurrency across folders', async () => {
    const a = folderOf('a', 2);
    const b = folderOf('b', 2);
    const { scheduler } = makeScheduler([a, b], 3);
    const gate = new Gate();
    for (let i = 0; i < 4; i++) scheduler.schedule(a, `a${i}`, 0, gate.task(`a${i}`));
    for (let i = 0; i < 4; i++) scheduler.schedule(b, `b${i}`, 0, gate.task(`b${i}`));
    await settle();
    expect(gate.inFlight).toBe(3);
    expect(gate.started.filter((n) => n.startsWith('a'))).toHaveLength(2);
    gate.release('a0');
    await settle();
    expect(gate.inFlight).toBe(3);
    for (let round = 0; round < 8; round++) {
      gate.releaseAll();
      await settle();
    }
    expect(gate.started).toHaveLength(8);
    expect(gate.maxInFlight).toBe(3);
    expect(scheduler.size).toBe(0);
  });

  it('takes a key once while it is queued or running, and again once it settled', async () => {
    const a = folderOf('a', 1);
    const { scheduler } = makeScheduler([a], 1);
    const gate = new Gate();
    expect(scheduler.schedule(a, 'item:1', 0, gate.task('first'))).toBe(true);
    expect(scheduler.schedule(a, 'item:1', 0, gate.task('second'))).toBe(true);
    await settle();
    gate.releaseAll();
    await settle();
    expect(gate.started).toEqual(['first']);
    scheduler.schedule(a, 'item:1', 0, gate.task('third'));
    await settle();
    expect(gate.started).toEqual(['first', 'third']);
    gate.releaseAll();
  });

  it('runs waiting work soonest upload deadline first', async () => {
    const a = folderOf('a', 1);
    const { scheduler } = makeScheduler([a], 1);
    const gate = new Gate();
    scheduler.schedule(a, 'busy', 0, gate.task('busy'));
    const now = Date.parse('2026-11-26T12:00:00Z');
    for (const minutes of [50, 10, 30]) {
      const item = { uploadDeadline: now + minutes * 60_000 } as Parameters<typeof priorityOf>[0];
      scheduler.schedule(a, `m${minutes}`, priorityOf(item, now, 0), gate.task(`m${minutes}`));
    }
    for (let round = 0; round < 4; round++) {
      await settle();
      gate.releaseAll();
    }
    await settle();
    expect(gate.started).toEqual(['busy', 'm10', 'm30', 'm50']);
    // A file not created yet waits behind one whose window ends within the default two hours.
    expect(priorityOf(undefined, now, 0)).toBeLessThan(
      priorityOf({ uploadDeadline: now + 60_000 } as never, now, 0),
    );
  });

  it('starts the waiting files of a higher priority folder first, each folder’s in the order they came in', async () => {
    const low = folderOf('low', 4);
    const high = folderOf('high', 4);
    const { scheduler } = makeScheduler([low, high], 1);
    const gate = new Gate();
    scheduler.schedule(low, 'busy', 0, gate.task('busy'));
    const now = Date.parse('2026-11-26T12:00:00Z');
    // The low folder's files came in first (a minute earlier, and earlier in the same second).
    for (const [i, at] of [now - 60_000, now, now].entries()) {
      scheduler.schedule(low, `low${i}`, priorityOf(undefined, at, 0), gate.task(`low${i}`));
    }
    for (const [i, at] of [now, now + 1_000].entries()) {
      scheduler.schedule(high, `high${i}`, priorityOf(undefined, at, 5), gate.task(`high${i}`));
    }
    for (let round = 0; round < 6; round++) {
      await settle();
      gate.releaseAll();
    }
    await settle();
    expect(gate.started).toEqual(['busy', 'high0', 'high1', 'low0', 'low1', 'low2']);
  });

  it('a file whose upload window runs goes before a higher priority folder’s new files; a negative priority goes after the default', async () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    const uploading = { uploadDeadline: now + 110 * 60_000 } as Parameters<typeof priorityOf>[0];
    const top = folderOf('top', 4);
    const plain = folderOf('plain', 4);
    const last = folderOf('last', 4);
    const { scheduler } = makeScheduler([top, plain, last], 1);
    const gate = new Gate();
    scheduler.schedule(plain, 'busy', 0, gate.task('busy'));
    // The new files came in an hour ago, the upload window of the last folder's file runs since.
    const earlier = now - 3_600_000;
    scheduler.schedule(top, 'new-top', priorityOf(undefined, earlier, 1000), gate.task('new-top'));
    scheduler.schedule(plain, 'new-plain', priorityOf(undefined, earlier, 0), gate.task('new-plain'));
    scheduler.schedule(last, 'new-last', priorityOf(undefined, earlier, -1000), gate.task('new-last'));
    scheduler.schedule(last, 'uploading', priorityOf(uploading, now, -1000), gate.task('uploading'));
    for (let round = 0; round < 6; round++) {
      await settle();
      gate.releaseAll();
    }
    await settle();
    expect(gate.started).toEqual(['busy', 'uploading', 'new-top', 'new-plain', 'new-last']);
    const ranks = [
      priorityOf(uploading, now, 0),
      priorityOf(undefined, now, 1000),
      priorityOf(undefined, now, -1000),
    ];
    for (const rank of ranks) expect(Number.isSafeInteger(rank)).toBe(true);
  });

  it('tells a folder’s backlog at its high mark (pause intake) and again at half of it (resume)', async () => {
    const a = folderOf('a', 1);
    const { scheduler, backlog } = makeScheduler([a], 1);
    const high = backlogHighMark(1);
    expect(high).toBe(16);
    const gate = new Gate();
    for (let i = 0; i < high; i++) scheduler.schedule(a, `f${i}`, 0, gate.task(`f${i}`));
    expect(backlog).toEqual([['a', true]]);
    for (let i = 0; i < high / 2 - 1; i++) {
      await settle();
      gate.releaseAll();
      await settle();
    }
    expect(backlog).toEqual([['a', true]]);
    gate.releaseAll();
    await settle();
    expect(backlog).toEqual([
      ['a', true],
      ['a', false],
    ]);
    for (let i = 0; i < high; i++) {
      gate.releaseAll();
      await settle();
    }
    expect(scheduler.size).toBe(0);
  });

  it('runs none of a halted folder’s queued work until it is released, and hands escaped errors to onTaskError', async () => {
    const a = folderOf('a', 1);
    const { scheduler, errors } = makeScheduler([a], 1);
    expect(scheduler.halt('a')).toBe(true);
    expect(scheduler.halt('a')).toBe(false);
    const ran: string[] = [];
    scheduler.schedule(a, 'halted', 0, async () => {
      ran.push('halted');
    });
    await settle();
    expect(ran).toEqual([]);
    scheduler.release('a');
    scheduler.schedule(a, 'after', 0, async () => {
      ran.push('after');
      throw new Error('escaped');
    });
    await settle();
    expect(ran).toEqual(['after']);
    expect(errors.map(([folder, err]) => [folder, (err as Error).message])).toEqual([['a', 'escaped']]);
  });

  it('drains a folder: waits for its work, runs the callback before each wait, then forgets the folder', async () => {
    const a = folderOf('a', 1);
    const b = folderOf('b', 1);
    const { scheduler } = makeScheduler([a, b], 2);
    const gate = new Gate();
    scheduler.schedule(a, 'a0', 0, gate.task('a0'));
    scheduler.schedule(b, 'b0', 0, gate.task('b0'));
    await settle();
    expect(scheduler.folders()).toEqual(['a', 'b']);
    let callbacks = 0;
    let drained = false;
    const draining = scheduler
      .drain('a', () => callbacks++)
      .then(() => {
        drained = true;
      });
    await settle();
    expect(drained).toBe(false);
    gate.release('a0');
    await draining;
    expect(callbacks).toBe(2);
    expect(scheduler.folders()).toEqual(['b']);
    gate.release('b0');
  });

  it('on stop, schedules nothing more, drops queued work, and aborts running work past its grace', async () => {
    const a = folderOf('a', 1);
    const { scheduler } = makeScheduler([a], 1);
    const ran: string[] = [];
    let abort: () => void = () => {};
    const aborted = new Promise<void>((resolve) => {
      abort = resolve;
    });
    scheduler.schedule(a, 'running', 0, async () => {
      ran.push('running');
      await aborted;
    });
    scheduler.schedule(a, 'queued', 0, async () => {
      ran.push('queued');
    });
    await settle();
    let abortCalls = 0;
    const stopped = await scheduler.stop(1, () => {
      abortCalls++;
      abort();
    });
    expect(stopped).toEqual({ finished: false });
    expect(abortCalls).toBe(1);
    expect(scheduler.stopping).toBe(true);
    expect(scheduler.schedule(a, 'late', 0, async () => {})).toBe(false);
    await settle();
    expect(ran).toEqual(['running']);
  });

  it('on stop, reports finished when running work settles within its grace, without aborting', async () => {
    const a = folderOf('a', 1);
    const { scheduler } = makeScheduler([a], 1);
    const gate = new Gate();
    scheduler.schedule(a, 'a0', 0, gate.task('a0'));
    await settle();
    let abortCalls = 0;
    const stopping = scheduler.stop(60_000, () => abortCalls++);
    gate.release('a0');
    expect(await stopping).toEqual({ finished: true });
    expect(abortCalls).toBe(0);
  });
});
