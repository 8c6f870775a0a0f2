/**
 * Bounds the API calls the follower starts: at most `max` in any `windowMs` (a sliding log of
 * start times rather than a token bucket, whose refill lets up to twice the rate through one
 * window). Time comes from the injected clock; waiting uses short real sleeps, so a test that moves
 * a ManualClock sees calls released as it moves.
 */
import type { Clock } from '../core/clock.js';

export class CallWindow {
  private readonly starts: number[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly max: number,
    private readonly windowMs = 60_000,
    private readonly maxSleepMs = 1000,
  ) {}

  /** Milliseconds (of clock time) until a call may start; 0 when it may start now. */
  waitMs(): number {
    const now = this.clock.now();
    while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
    if (this.starts.length < this.max) return 0;
    return this.starts[0]! + this.windowMs - now;
  }

  /** Takes a slot, waiting for one; rejects when `signal` aborts. */
  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const wait = this.waitMs();
      if (wait === 0) {
        this.starts.push(this.clock.now());
        return;
      }
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
  }

  /** Calls started in the last window (metrics, tests). */
  inWindow(): number {
    this.waitMs();
    return this.starts.length;
  }
}
