/**
 * What happens after a file's try failed: the retry policy (domain/retry-policy.ts) counts the
 * tries in a row and says wait or give up. The count, the failure's code and when the next try is
 * due are kept in the journal, so a restarted agent continues each file's backoff where it was
 * (resumeAt). A file that waits keeps its journal state and is driven again when its timer fires;
 * one given up on is parked (error folder). Timers are unref'd: a waiting file never keeps the
 * process alive, and a stop or a removed folder cancels them.
 */
import type { Clock } from '../core/clock.js';
import { crashPoint } from '../core/crash-points.js';
import type { Logger } from '../core/logger.js';
import { defaultRetryDelay, nextTry, stepFailure } from '../domain/retry-policy.js';
import { isFinal, type JournalItem, type JournalStore } from '../journal/index.js';

export interface RetryTimersOptions {
  journal: JournalStore;
  clock: Clock;
  log: Logger;
  /** Wait before try number `n` (1-based). Default 1 s doubling, at most 60 s. */
  retryDelayMs?: (n: number) => number;
  /** A wait is over: drive the item again. */
  resume: (itemId: number) => void;
  /** A timer fired, after its item was resumed (the pipeline checks whether it became idle). */
  onFired: () => void;
}

export class RetryTimers {
  private readonly timers = new Map<number, { folder: string; timer: NodeJS.Timeout }>();

  constructor(private readonly options: RetryTimersOptions) {}

  /** Files waiting for their next try. */
  get waiting(): number {
    return this.timers.size;
  }

  /**
   * The item's try succeeded, made progress, or it left the pipeline: its count of tries in a row
   * starts again. A write only when there is a count to clear (the common path writes nothing).
   */
  async reset(item: JournalItem): Promise<void> {
    // A finished file waits no more (and, with leases, is no longer held: the journal would refuse).
    if (isFinal(item.state) || (item.failedTries === 0 && item.nextTryAt === undefined)) return;
    // Not worth failing a try that succeeded: a count left behind only makes a later wait longer.
    await this.options.journal.clearFailedTries(item.id).catch((err: unknown) => {
      this.options.log.warn(
        { folder: item.folder, file: item.fileName, err },
        'count of failed tries not cleared',
      );
    });
  }

  /**
   * A try of the item failed with `err`: `park` it if the policy gives up (true when parked), else
   * record the failed try and wait. `item` is as the journal has it now (its count of failed tries).
   */
  async failed(item: JournalItem, err: unknown, park: (reason: string) => Promise<boolean>): Promise<void> {
    const n = item.failedTries + 1;
    const failure = stepFailure(err);
    const next = nextTry(failure, n, this.options.retryDelayMs);
    if (next.kind === 'park' && (await park(next.reason))) return;
    // A park that failed (a full disk) is tried again like any transient failure.
    const delay = next.kind === 'wait' ? next.delayMs : defaultRetryDelay(n);
    // The wait happens even when the journal cannot record it (its database is down): the next
    // try then counts from the last count recorded.
    await this.options.journal
      .recordFailedTry(item.id, { code: failure.code, nextTryAt: this.options.clock.now() + delay })
      .catch((recordErr: unknown) => {
        this.options.log.warn(
          { folder: item.folder, file: item.fileName, err: recordErr },
          'failed try not recorded in the journal',
        );
      });
    crashPoint('after-failed-try');
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
    this.wait(item, delay);
  }

  /**
   * An item found waiting in the journal at start (its next try recorded before a stop or a
   * crash): driven again when its wait is over, not at once. Answers false when none is left.
   */
  resumeAt(item: JournalItem): boolean {
    if (item.nextTryAt === undefined) return false;
    const left = item.nextTryAt - this.options.clock.now();
    if (left <= 0) return false;
    this.options.log.info(
      { folder: item.folder, file: item.fileName, jobId: item.jobId, retryInMs: left, try: item.failedTries },
      'file waits for its next try',
    );
    this.wait(item, left);
    return true;
  }

  private wait(item: JournalItem, delayMs: number): void {
    clearTimeout(this.timers.get(item.id)?.timer);
    const timer = setTimeout(() => {
      this.timers.delete(item.id);
      this.options.resume(item.id);
      this.options.onFired();
    }, delayMs);
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
    }
  }

  /** Cancels every wait (the agent stops). */
  cancelAll(): void {
    for (const wait of this.timers.values()) clearTimeout(wait.timer);
    this.timers.clear();
  }
}
