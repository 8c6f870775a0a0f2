import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { API_ERROR_CODES, isApiError, isRetryableTransportError } from './errors.js';
import { isRetryableStatus, nextDelay, type RetryPolicy, sleep as realSleep } from './retry.js';

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** What one attempt got: an answer (ok, or its status and Retry-After) or none (`status` undefined). */
export interface AttemptOutcome {
  ok: boolean;
  status?: number | undefined;
  retryAfterMs?: number | undefined;
}

/** Told of every attempt's outcome, retries included (the follower paces itself by them). */
export type AttemptListener = (outcome: AttemptOutcome) => void;

/**
 * Paces each attempt of a call (api/host-pace.ts): `begin` resolves when the attempt may start,
 * with the listener that must hear how it ended (which frees its place).
 */
export interface AttemptPace {
  begin(signal?: AbortSignal): Promise<AttemptListener>;
}

export interface RetryLoopOptions {
  policy: RetryPolicy;
  clock: Clock;
  log: Logger;
  method: string;
  route: string;
  /** False for requests that create something: they get exactly one attempt. */
  retryable: boolean;
  signal?: AbortSignal;
  sleep?: Sleep;
  onAttempt?: AttemptListener;
  /** Each attempt, retries included, waits its turn here first. */
  pace?: AttemptPace;
}

function outcomeOf(err: unknown): AttemptOutcome {
  if (!isApiError(err)) return { ok: false };
  return { ok: false, status: err.status, retryAfterMs: err.retryAfterMs };
}

/** True for failures where another attempt may succeed: 429, 5xx but 501, dropped connections. */
export function isRetryableFailure(err: unknown): boolean {
  if (!isApiError(err)) return false;
  if (err.status !== undefined) return isRetryableStatus(err.status);
  return err.code === API_ERROR_CODES.network && isRetryableTransportError(err.cause);
}

/** Runs `attempt` until it succeeds, fails for good, or the policy gives up; throws the last error. */
export async function withRetry<T>(
  options: RetryLoopOptions,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  const sleep = options.sleep ?? realSleep;
  const started = options.clock.now();
  for (let n = 1; ; n++) {
    const paced = await options.pace?.begin(options.signal);
    try {
      const value = await attempt(n);
      paced?.({ ok: true });
      options.onAttempt?.({ ok: true });
      return value;
    } catch (err) {
      // An attempt cut short by the caller tells the pace nothing but that its place is free.
      paced?.(options.signal?.aborted ? { ok: false } : outcomeOf(err));
      if (options.signal?.aborted) throw err;
      options.onAttempt?.(outcomeOf(err));
      if (!options.retryable || !isRetryableFailure(err)) throw err;
      const retryAfterMs = isApiError(err) ? err.retryAfterMs : undefined;
      const delay = nextDelay(options.policy, {
        attempt: n,
        elapsedMs: options.clock.now() - started,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
      if (delay === undefined) throw err;
      // Each retry at debug: the client's ServiceReachability says once when calls keep failing.
      options.log.debug(
        {
          method: options.method,
          route: options.route,
          attempt: n,
          delayMs: delay,
          ...(isApiError(err) ? { code: err.code, status: err.status } : {}),
        },
        'api retry',
      );
      await sleep(delay, options.signal);
    }
  }
}
