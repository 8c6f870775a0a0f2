/**
 * What happens after a file's try failed: the retry policy (domain/retry-policy.ts) counts the
 * tries in a row and says wait or give up. A file that waits keeps its journal state and is driven
 * again when its timer fires; one given up on is parked (error folder). Timers are unref'd: a
 * waiting file never keeps the process alive, and a stop or a removed folder cancels them.
 */
import type { Logger } from '../core/logger.js';
import { defaultRetryDelay, nextTry, stepFailure } from '../domain/retry-policy.js';
import type { JournalItem } from '../journal/index.js';

export interface RetryTimersOptions {
  log: Logger;
  /** Wait before try number `n` (1-based). Default 1 s doubling, at most 60 s. */
  retryDelayMs?: (n: number) => number;
  /** A wait is over: drive the item again. */
  resume: (itemId: number) => void;
  /** A timer fired, after its item was resumed (the pipeline checks whether it became idle). */
  onFired: () => void;
}

export class RetryTimers {
  /** Failed tries in a row, by item. */
  private readonly tries = new Map<number, number>();
  private readonly timers = new Map<number, { folder: string; timer: NodeJS.Timeout }>();

  constructor(private readonly options: RetryTimersOptions) {}

  /** Files waiting for their next try. */
  get waiting(): number {
    return this.timers.size;
  }

  /** The item's try succeeded, or it left the pipeline: its count of tries in a row starts again. */
  reset(itemId: number): void {
    this.tries.delete(itemId);
  }

  /**
   * A try of the item failed with `err`: `park` it if the policy gives up (true when parked), else
   * wait and try again.
   */
  async failed(item: JournalItem, err: unknown, park: (reason: string) => Promise<boolean>): Promise<void> {
    const n = (this.tries.get(item.id) ?? 0) + 1;
    this.tries.set(item.id, n);
    const failure = stepFailure(err);
    const next = nextTry(failure, n, this.options.retryDelayMs);
    if (next.kind === 'park' && (await park(next.reason))) {
      this.tries.delete(item.id);
      return;
    }
    // A park that failed (a full disk) is tried again like any transient failure.
    const delay = next.kind === 'wait' ? next.delayMs : defaultRetryDelay(n);
    this.options.log.warn(
      {
        folder: item.folder,
        file: item.fileName,
        jobId: item.jobId,
        code: failure.code,
        failure: failure.kind,
        // A bug's stack is what a report of it needs; an expected failure's message says it all.
        ...(failure.kind === 'internal' ? { err } : { reason: failure.message }),
        retryInMs: delay,
        try: n,
      },
      'file must wait',
    );
    const timer = setTimeout(() => {
      this.timers.delete(item.id);
      this.options.resume(item.id);
      this.options.onFired();
    }, delay);
    timer.unref();
    this.timers.set(item.id, { folder: item.folder, timer });
  }

  /**
   * Cancels the waits of one folder's files (a folder removed by a reload: they stay in the
   * journal and `.processing/`, and a folder started again on that name recovers them).
   */
  cancel(folder: string): void {
    for (const [id, wait] of this.timers) {
      if (wait.folder !== folder) continue;
      clearTimeout(wait.timer);
      this.timers.delete(id);
      this.tries.delete(id);
    }
  }

  /** Cancels every wait (the agent stops). */
  cancelAll(): void {
    for (const wait of this.timers.values()) clearTimeout(wait.timer);
    this.timers.clear();
  }
}
