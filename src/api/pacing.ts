/**
 * How fast the agent calls one service host, pure (every `now` is passed in): a concurrency that
 * grows by one per round of good answers (additive increase) while it is in use, halves when the
 * service answers 429 or 503 (multiplicative decrease), and a pause until the time a Retry-After
 * names, for every call to the host. Limits on call starts bound it further: a rate for all calls
 * (a token bucket), and limits of their own for some calls, by key (a folder's rate, the return
 * path's budget of calls per minute).
 */
import type { AttemptOutcome } from './retry-loop.js';

/** Concurrency `auto` starts here... */
export const AUTO_START = 4;
/** ...and grows up to here: past it, loopback and a two-core machine show no gain. */
export const AUTO_CEILING = 32;
const MINUTE_MS = 60_000;
/** A token bucket holds the starts of this long (at least one): any minute passes at most 1 % more. */
const BURST_MS = 600;

/** `count` call starts per `perMs`. */
export interface Rate {
  count: number;
  perMs: number;
}

export interface PacingSettings {
  /** `auto`, or at most this many calls in flight (still halved on 429/503). */
  concurrency: 'auto' | number;
  /** Call starts allowed in any 60 s (a sliding log); undefined: no budget. */
  maxCallsPerMinute?: number | undefined;
  /** Call starts per period for all calls (a token bucket); undefined: no rate. */
  rate?: Rate | undefined;
}

/** 429 Too Many Requests and 503 Service Unavailable: the service asks for less. */
export function asksToSlowDown(outcome: AttemptOutcome): boolean {
  return !outcome.ok && (outcome.status === 429 || outcome.status === 503);
}

/** A bound on call starts: how long until the next may start, and that one started. */
export interface StartLimit {
  waitMs(now: number): number;
  started(now: number): void;
}

/**
 * At most `max` starts in any `windowMs` (a sliding log of start times, not a token bucket, whose
 * refill lets up to twice the rate through one window).
 */
export class StartLog implements StartLimit {
  private readonly starts: number[] = [];

  constructor(
    readonly max: number,
    private readonly windowMs = MINUTE_MS,
  ) {}

  waitMs(now: number): number {
    while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
    return this.starts.length < this.max ? 0 : this.starts[0]! + this.windowMs - now;
  }

  started(now: number): void {
    this.starts.push(now);
  }
}

/**
 * `rate.count` starts per `rate.perMs`, refilled continuously; the bucket holds the starts of
 * BURST_MS (at least one), so any minute passes at most a hundredth of a minute's starts more than
 * the rate.
 */
export class TokenBucket implements StartLimit {
  private readonly capacity: number;
  private tokens: number;
  private at: number | undefined;

  constructor(readonly rate: Rate) {
    this.capacity = Math.max(1, Math.floor((rate.count * BURST_MS) / rate.perMs));
    this.tokens = this.capacity;
  }

  private refill(now: number): void {
    if (this.at !== undefined && now > this.at) {
      this.tokens = Math.min(
        this.capacity,
        this.tokens + ((now - this.at) * this.rate.count) / this.rate.perMs,
      );
    }
    if (this.at === undefined || now > this.at) this.at = now;
  }

  waitMs(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) return 0;
    return Math.max(1, Math.ceil(((1 - this.tokens) * this.rate.perMs) / this.rate.count));
  }

  started(now: number): void {
    this.refill(now);
    this.tokens -= 1;
  }
}

/** Whether two rates are the same (a reload that keeps a folder's rate keeps its bucket). */
export function sameRate(a: Rate | undefined, b: Rate | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.count === b.count && a.perMs === b.perMs);
}

export class Pacing {
  private readonly ceiling: number;
  /** The congestion window: fractional, so growth is one per round of `limit()` good answers. */
  private window: number;
  private pausedUntil = Number.NEGATIVE_INFINITY;
  private readonly global: StartLimit[] = [];
  private readonly keyed = new Map<string, StartLimit[]>();
  private seq = 0;
  /** Calls started before the last decrease do not halve again: one burst, one halving. */
  private decreasedAt = 0;

  constructor(settings: PacingSettings) {
    this.ceiling = settings.concurrency === 'auto' ? AUTO_CEILING : settings.concurrency;
    this.window = settings.concurrency === 'auto' ? AUTO_START : settings.concurrency;
    if (settings.maxCallsPerMinute !== undefined) this.global.push(new StartLog(settings.maxCallsPerMinute));
    if (settings.rate !== undefined) this.global.push(new TokenBucket(settings.rate));
  }

  /** Calls that may be in flight now. */
  limit(): number {
    return Math.max(1, Math.floor(this.window));
  }

  /** The limits of the calls of `key` only (on top of those of every call); none: removes them. */
  limitKey(key: string, limits: StartLimit[]): void {
    if (limits.length === 0) this.keyed.delete(key);
    else this.keyed.set(key, limits);
  }

  /** The limits of `key`'s calls (empty when none). */
  keyLimits(key: string): readonly StartLimit[] {
    return this.keyed.get(key) ?? [];
  }

  /** Milliseconds until a call (of `key`) may start (a Retry-After pause, a rate, a budget); 0: now. */
  waitMs(now: number, key?: string): number {
    let wait = Math.max(0, this.pausedUntil - now);
    for (const limit of this.limitsOf(key)) wait = Math.max(wait, limit.waitMs(now));
    return wait;
  }

  /** A call (of `key`) starts now (after waitMs said 0); answers its ticket for `answered`. */
  started(now: number, key?: string): number {
    for (const limit of this.limitsOf(key)) limit.started(now);
    return ++this.seq;
  }

  /**
   * One attempt of the call `ticket` ended. `busy`: `limit()` calls were in flight, so a good
   * answer says the service takes that many (an unused limit is not grown).
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

  private limitsOf(key: string | undefined): StartLimit[] {
    const own = key === undefined ? undefined : this.keyed.get(key);
    return own ? [...this.global, ...own] : this.global;
  }
}
