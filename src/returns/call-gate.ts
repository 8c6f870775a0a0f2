/**
 * Where every API call of the follower waits its turn: in the pace of the service host
 * (api/host-pace.ts), shared with the intake when the agent runs both, under the follower's own
 * bounds (follow.concurrency as a number, follow.maxCallsPerMinute).
 */
import type { HeldPlace, HostPace } from '../api/host-pace.js';
import type { Pacing } from '../api/pacing.js';
import type { AttemptListener } from '../api/retry-loop.js';

/** The key of the follower's own limits in the host's pacing. */
export const RETURNS_KEY = 'returns';

export class CallGate {
  constructor(
    readonly pace: HostPace,
    /** follow.concurrency as a number: the follower's calls in flight stay at most this many. */
    private readonly cap = Number.POSITIVE_INFINITY,
    /** The place of the task whose calls these are (see holding). */
    private readonly place?: HeldPlace,
  ) {}

  /**
   * This gate for the calls of one task, which holds `place` between them: a call that must wait
   * (the follower's budget, a rate, a Retry-After) lets the place go meanwhile.
   */
  holding(place: HeldPlace): CallGate {
    return new CallGate(this.pace, this.cap, place);
  }

  get pacing(): Pacing {
    return this.pace.pacing;
  }

  /** Calls the follower may have in flight now: the host's limit, under its own cap. */
  limit(): number {
    return Math.min(this.cap, this.pacing.limit());
  }

  /**
   * Waits until a call may start (rejects when `options.signal` aborts); answers the options for
   * that one call, with the listener that reports its attempts to the pacing.
   */
  take<T extends { signal?: AbortSignal | undefined }>(
    options: T,
  ): Promise<T & { onAttempt: AttemptListener }> {
    return this.pace.take(options, { caller: 'returns', key: RETURNS_KEY }, this.place);
  }
}
