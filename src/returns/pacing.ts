/**
 * How fast the follower calls the service, pure (every `now` is passed in): a concurrency that
 * grows by one per round of good answers (additive increase) while it is in use, halves when the
 * service answers 429 or 503 (multiplicative decrease), and a pause until the time a Retry-After
 * names. An optional budget of call starts per minute (a sliding log of start times, not a token
 * bucket, whose refill lets up to twice the rate through one window) bounds it further.
 */
import type { AttemptOutcome } from '../api/retry-loop.js';

/** Concurrency `auto` starts here... */
export const AUTO_START = 4;
/** ...and grows up to here: past it, loopback and a two-core machine show no gain. */
export const AUTO_CEILING = 32;
const WINDOW_MS = 60_000;

export interface PacingSettings {
  /** `auto`, or at most this many calls in flight (still halved on 429/503). */
  concurrency: 'auto' | number;
  /** Call starts allowed in any 60 s; undefined: no budget. */
  maxCallsPerMinute?: number | undefined;
}

/** 429 Too Many Requests and 503 Service Unavailable: the service asks for less. */
export function asksToSlowDown(outcome: AttemptOutcome): boolean {
  return !outcome.ok && (outcome.status === 429 || outcome.status === 503);
}

export class Pacing {
  private readonly ceiling: number;
  /** The congestion window: fractional, so growth is one per round of `limit()` good answers. */
  private window: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly starts: number[] = [];
  private seq = 0;
  /** Calls started before the last decrease do not halve again: one burst, one halving. */
  private decreasedAt = 0;

  constructor(private readonly settings: PacingSettings) {
    this.ceiling = settings.concurrency === 'auto' ? AUTO_CEILING : settings.concurrency;
    this.window = settings.concurrency === 'auto' ? AUTO_START : settings.concurrency;
  }

  /** Calls that may be in flight now. */
  limit(): number {
    return Math.max(1, Math.floor(this.window));
  }

  /** Milliseconds until a call may start (a Retry-After pause, the minute budget); 0: now. */
  waitMs(now: number): number {
    const paused = Math.max(0, this.pausedUntil - now);
    const max = this.settings.maxCallsPerMinute;
    if (max === undefined) return paused;
    while (this.starts.length > 0 && this.starts[0]! <= now - WINDOW_MS) this.starts.shift();
    const budget = this.starts.length < max ? 0 : this.starts[0]! + WINDOW_MS - now;
    return Math.max(paused, budget);
  }

  /** A call starts now (after waitMs said 0); answers its ticket for `answered`. */
  started(now: number): number {
    if (this.settings.maxCallsPerMinute !== undefined) this.starts.push(now);
    return ++this.seq;
  }

  /**
   * One attempt of the call `ticket` ended. `busy`: the follower had `limit()` calls in flight, so
   * a good answer says the service takes that many (an unused limit is not grown).
   */
  answered(ticket: number, outcome: AttemptOutcome, now: number, busy: boolean): void {
    if (outcome.retryAfterMs !== undefined && asksToSlowDown(outcome)) {
      this.pausedUntil = Math.max(this.pausedUntil, now + outcome.retryAfterMs);
    }
    if (asksToSlowDown(outcome)) {
      if (ticket > this.decreasedAt) {
        this.window = Math.max(1, this.window / 2);
        this.decreasedAt = this.seq;
      }
      return;
    }
    if (outcome.ok && busy && this.window < this.ceiling) {
      this.window = Math.min(this.ceiling, this.window + 1 / this.limit());
    }
  }

  /** Whether calls are held by a Retry-After (metrics, logs). */
  pausedFor(now: number): number {
    return Math.max(0, this.pausedUntil - now);
  }
}
