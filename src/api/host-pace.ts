/**
 * Where every call to one service host waits its turn, the intake's and the return path's alike:
 * the Pacing (pure) decides, this waits and tells it how each attempt went. One 429 with a
 * Retry-After holds every caller of the host; a halving halves them all. Time comes from the
 * injected clock; waiting uses short real sleeps (woken early when a place frees), so a test that
 * moves a ManualClock sees calls released as it moves.
 */
import type { Clock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { type ApiObserver, notify } from './observer.js';
import { asksToSlowDown, type Pacing, type Rate, sameRate, TokenBucket } from './pacing.js';
import type { AttemptListener, AttemptOutcome, AttemptPace } from './retry-loop.js';

/** Who calls: what logs and metrics name. */
export type PaceCaller = 'intake' | 'returns';

/** One kind of call: its caller and, when it has limits of its own (a folder's rate), their key. */
export interface PacedCall {
  caller: PaceCaller;
  key?: string | undefined;
}

/** The key of a drop folder's calls (its `rate`). */
export function folderPaceKey(folder: string): string {
  return `folder:${folder}`;
}

const WHO: Record<PaceCaller, string> = { intake: 'intake', returns: 'follower' };

/**
 * A place held across several calls (a follower task, see HostPace.hold): let go while one of
 * its calls waits for its turn (take), and taken again with that turn.
 */
export class HeldPlace {
  private taken = true;

  constructor(private readonly free: () => void) {}

  /** Whether the place is taken now. */
  isTaken(): boolean {
    return this.taken;
  }

  /** Frees the place; again, or while let go: nothing. */
  release(): void {
    if (!this.taken) return;
    this.taken = false;
    this.free();
  }

  /** The pace took the place again (with a call's turn). */
  retaken(): void {
    this.taken = true;
  }
}

export class HostPace {
  /** Places taken: attempts in flight (intake) and held places (the follower's tasks). */
  private held = 0;
  /** Attempts waiting for a place (demand the limit holds back). */
  private waitingForPlace = 0;
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly clock: Clock,
    readonly pacing: Pacing,
    private readonly log: Logger,
    private readonly options: { maxSleepMs?: number | undefined; observer?: ApiObserver | undefined } = {},
  ) {}

  /** Places taken now (the concurrency in use). */
  inFlight(): number {
    return this.held;
  }

  /**
   * Whether the limit holds calls back: every place taken, or attempts waiting for one (a good
   * answer then grows the limit; an unused limit is not grown).
   */
  busy(): boolean {
    return this.full() || this.waitingForPlace > 0;
  }

  private full(): boolean {
    return this.held >= this.pacing.limit();
  }

  /** Places free now. */
  free(): number {
    return Math.max(0, this.pacing.limit() - this.held);
  }

  /**
   * Takes a place outside any call (a follower task, whose calls go through take() with it); its
   * release frees it once.
   */
  hold(): HeldPlace {
    this.held++;
    return new HeldPlace(() => {
      this.held--;
      this.wake();
    });
  }

  /**
   * A folder's own rate (a token bucket under `key`), set or replaced when it changed (a reload);
   * undefined removes it.
   */
  rateOf(key: string, rate: Rate | undefined): void {
    const [current] = this.pacing.keyLimits(key);
    if (sameRate(current instanceof TokenBucket ? current.rate : undefined, rate)) return;
    this.pacing.limitKey(key, rate ? [new TokenBucket(rate)] : []);
  }

  /**
   * Waits until a call may start (a Retry-After, the rates; no place is taken: the caller holds
   * its own); answers the options for that one call, with the listener that reports its attempts.
   * Rejects when `options.signal` aborts. A caller's `place` is let go while the call waits (its
   * own budget, a rate, a Retry-After: a place is for calls that may start, the intake's among
   * them) and taken again with the turn, once one is free; a turn that never comes leaves it free.
   */
  async take<T extends { signal?: AbortSignal | undefined }>(
    options: T,
    call: PacedCall,
    place?: HeldPlace,
  ): Promise<T & { onAttempt: AttemptListener }> {
    const letGo =
      place !== undefined && (!place.isTaken() || this.pacing.waitMs(this.clock.now(), call.key) > 0);
    if (letGo) place.release();
    const ticket = await this.turn(call, options.signal, letGo);
    if (letGo) place.retaken();
    return { ...options, onAttempt: (outcome) => this.answered(ticket, outcome, call, this.busy()) };
  }

  /**
   * The pace of each attempt of a call (CallOptions.pace): a Retry-After, the rates and a free place.
   * A signal that ends before the turn comes (a create's lease allowance, a stop) rejects with
   * DOCEX_PACE_TURN_LATE: the attempt was never sent, so it is neither a failure of the call nor a
   * request the service may hold.
   */
  attempts(call: PacedCall): AttemptPace {
    return {
      begin: async (signal) => {
        const ticket = await this.turn(call, signal, true).catch((err: unknown) => {
          if (!signal?.aborted) throw err;
          throw new DocexError(
            'DOCEX_PACE_TURN_LATE',
            'the call waited its turn in the pace of the service host until its time ran out: not sent',
            { cause: err },
          );
        });
        let ended = false;
        return (outcome) => {
          if (ended) return;
          ended = true;
          const busy = this.busy();
          this.held--;
          this.answered(ticket, outcome, call, busy);
          this.wake();
        };
      },
    };
  }

  private async turn(call: PacedCall, signal: AbortSignal | undefined, place: boolean): Promise<number> {
    const from = this.clock.now();
    for (;;) {
      signal?.throwIfAborted();
      const wait = this.pacing.waitMs(this.clock.now(), call.key);
      if (wait === 0 && !(place && this.full())) break;
      const forPlace = wait === 0;
      if (forPlace) this.waitingForPlace++;
      try {
        await this.sleep(forPlace ? this.maxSleepMs() : Math.min(wait, this.maxSleepMs()), signal);
      } finally {
        if (forPlace) this.waitingForPlace--;
      }
    }
    // Checked and taken in one turn of the event loop: two waiters never share one start.
    const now = this.clock.now();
    const ticket = this.pacing.started(now, call.key);
    if (place) this.held++;
    if (now > from)
      notify(this.options.observer, 'paceWait', { caller: call.caller, seconds: (now - from) / 1000 });
    return ticket;
  }

  private answered(ticket: number, outcome: AttemptOutcome, call: PacedCall, busy: boolean): void {
    const now = this.clock.now();
    const before = this.pacing.limit();
    this.pacing.answered(ticket, outcome, now, busy);
    if (!asksToSlowDown(outcome)) {
      if (this.pacing.limit() > before) this.wake();
      return;
    }
    notify(this.options.observer, 'paceBackoff', { caller: call.caller, status: outcome.status! });
    const after = this.pacing.limit();
    const pausedMs = this.pacing.pausedFor(now);
    if (after === before && pausedMs === 0) return;
    this.log.info(
      { status: outcome.status, concurrency: after, was: before, ...(pausedMs > 0 ? { pausedMs } : {}) },
      `the service asks for fewer calls: ${WHO[call.caller]} slows down`,
    );
  }

  private maxSleepMs(): number {
    return this.options.maxSleepMs ?? 1000;
  }

  /** A short real sleep, ended early by a freed place or `signal`. */
  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    for (const waker of [...this.wakers]) waker();
  }
}
