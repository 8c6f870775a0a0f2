/**
 * The retry policy, pure: which answers are worth another attempt and how long to wait. The
 * caller owns the loop, the clock and the sleeping.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff ceiling; doubles per attempt (full jitter picks a delay below it). */
  baseDelayMs: number;
  /** Largest single wait, Retry-After included. */
  maxDelayMs: number;
  /** No new attempt starts once this much time has passed since the first. */
  maxTotalMs: number;
  /** Uniform in [0, 1); injected so tests are deterministic. */
  random: () => number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  maxTotalMs: 120_000,
  random: Math.random,
};

export function retryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return { ...DEFAULT_RETRY_POLICY, ...overrides };
}

/** 429 and 5xx other than 501 (Not Implemented will not change on a second try). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599 && status !== 501);
}

/** Retry-After as seconds or an HTTP date, in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** Full-jitter exponential backoff after `failedAttempts` failures (1 for the first retry). */
export function backoffDelay(policy: RetryPolicy, failedAttempts: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.floor(policy.random() * ceiling);
}

export interface RetryDecisionInput {
  /** Attempts made so far, the failed one included. */
  attempt: number;
  /** Time since the first attempt started. */
  elapsedMs: number;
  /** Wait the service asked for, if any. */
  retryAfterMs?: number;
}

/** How long to wait before the next attempt, or undefined to give up. */
export function nextDelay(policy: RetryPolicy, input: RetryDecisionInput): number | undefined {
  if (input.attempt >= policy.maxAttempts) return undefined;
  const delay = input.retryAfterMs !== undefined ? input.retryAfterMs : backoffDelay(policy, input.attempt);
  // A Retry-After beyond our ceiling means the caller should come back later, not block here.
  if (delay > policy.maxDelayMs) return undefined;
  if (input.elapsedMs + delay > policy.maxTotalMs) return undefined;
  return delay;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
