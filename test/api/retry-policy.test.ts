import { describe, expect, it } from 'vitest';
import { ApiError, httpError, transportError } from '../../src/api/errors.js';
import {
  backoffDelay,
  isRetryableStatus,
  nextDelay,
  parseRetryAfter,
  retryPolicy,
} from '../../src/api/retry.js';
import { type AttemptOutcome, isRetryableFailure, withRetry } from '../../src/api/retry-loop.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';

describe('retry policy', () => {
  it('draws full-jitter delays below a ceiling that doubles up to maxDelayMs', () => {
    const top = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.999999 });
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(top, n))).toEqual([99, 199, 399, 799, 999]);
    const bottom = retryPolicy({ random: () => 0 });
    expect(backoffDelay(bottom, 3)).toBe(0);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-21T10:00:00.000Z');
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('gives up at maxAttempts, past maxTotalMs, or when Retry-After exceeds maxDelayMs', () => {
    const policy = retryPolicy({ maxAttempts: 3, maxTotalMs: 10_000, maxDelayMs: 5_000, random: () => 0.5 });
    expect(nextDelay(policy, { attempt: 1, elapsedMs: 0 })).toBe(125);
    expect(nextDelay(policy, { attempt: 3, elapsedMs: 0 })).toBeUndefined();
    expect(nextDelay(policy, { attempt: 1, elapsedMs: 9_990 })).toBeUndefined();
    expect(nextDelay(policy, { attempt: 1, elapsedMs: 0, retryAfterMs: 4_000 })).toBe(4_000);
    expect(nextDelay(policy, { attempt: 1, elapsedMs: 0, retryAfterMs: 6_000 })).toBeUndefined();
  });

  it('retries 429 and 5xx except 501, and dropped connections but not TLS failures', () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 413, 415, 501].some(isRetryableStatus)).toBe(false);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const tls = Object.assign(new Error('self-signed'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    expect(isRetryableFailure(transportError(reset, 'GET', '/jobs'))).toBe(true);
    expect(transportError(tls, 'GET', '/jobs').code).toBe('DOCEX_TLS');
    expect(isRetryableFailure(transportError(tls, 'GET', '/jobs'))).toBe(false);
    expect(isRetryableFailure(httpError({ status: 503, method: 'GET', route: '/jobs' }))).toBe(true);
    expect(
      isRetryableFailure(new ApiError('DOCEX_UPLOAD_ETAG_MISMATCH', 'x', { method: 'PUT', route: 'u' })),
    ).toBe(false);
  });

  it('tells onAttempt of every attempt, retries included: status and Retry-After of each refusal, then ok', async () => {
    const seen: AttemptOutcome[] = [];
    const answers = [
      httpError({ status: 429, method: 'GET', route: '/jobs/{id}', retryAfterMs: 3 }),
      httpError({ status: 503, method: 'GET', route: '/jobs/{id}' }),
    ];
    const value = await withRetry(
      {
        policy: retryPolicy({ random: () => 0 }),
        clock: new ManualClock(),
        log: silentLogger(),
        method: 'GET',
        route: '/jobs/{id}',
        retryable: true,
        sleep: async () => {},
        onAttempt: (o) => seen.push(o),
      },
      async (n) => {
        if (n <= answers.length) throw answers[n - 1];
        return 'job';
      },
    );
    expect(value).toBe('job');
    expect(seen).toEqual([
      { ok: false, status: 429, retryAfterMs: 3 },
      { ok: false, status: 503, retryAfterMs: undefined },
      { ok: true },
    ]);
  });
});
