/**
 * Where every API call of the follower waits its turn: the Pacing (pure) decides, this waits and
 * tells it how each attempt went. Time comes from the injected clock; waiting uses short real
 * sleeps, so a test that moves a ManualClock sees calls released as it moves.
 */
import type { AttemptListener, AttemptOutcome } from '../api/retry-loop.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { asksToSlowDown, type Pacing } from './pacing.js';

export class CallGate {
  constructor(
    private readonly clock: Clock,
    readonly pacing: Pacing,
    /** Whether the follower has `pacing.limit()` calls in flight. */
    private readonly busy: () => boolean,
    private readonly log: Logger,
    private readonly maxSleepMs = 1000,
  ) {}

  private answered(ticket: number, outcome: AttemptOutcome): void {
    const now = this.clock.now();
    const before = this.pacing.limit();
    this.pacing.answered(ticket, outcome, now, this.busy());
    if (!asksToSlowDown(outcome)) return;
    const after = this.pacing.limit();
    const pausedMs = this.pacing.pausedFor(now);
    if (after === before && pausedMs === 0) return;
    this.log.info(
      { status: outcome.status, concurrency: after, was: before, ...(pausedMs > 0 ? { pausedMs } : {}) },
      'the service asks for fewer calls: follower slows down',
    );
  }

  /**
   * Waits until a call may start (rejects when `options.signal` aborts); answers the options for
   * that one call, with the listener that reports its attempts to the pacing.
   */
  async take<T extends { signal?: AbortSignal | undefined }>(
    options: T,
  ): Promise<T & { onAttempt: AttemptListener }> {
    const signal = options.signal;
    for (;;) {
      signal?.throwIfAborted();
      const wait = this.pacing.waitMs(this.clock.now());
      if (wait === 0) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(wait, this.maxSleepMs));
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    const ticket = this.pacing.started(this.clock.now());
    return {
      ...options,
      onAttempt: (outcome) => this.answered(ticket, outcome),
    };
  }
}
