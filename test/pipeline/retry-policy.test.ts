import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES, ApiError } from '../../src/api/index.js';
import type { ErrorCode } from '../../src/core/error-codes.js';
import { DocexError } from '../../src/core/errors.js';
import {
  defaultRetryDelay,
  INTERNAL_TRY_LIMIT,
  nextTry,
  stepFailure,
  TRANSIENT_TRY_LIMIT,
} from '../../src/domain/retry-policy.js';
import { classifyFailure } from '../../src/pipeline/retry-policy.js';
import { RetryLater } from '../../src/pipeline/types.js';

const http = (status: number, code: ErrorCode = `DOCEX_API_${status}`) =>
  new ApiError(code, `answered ${status}`, { status, method: 'POST', route: '/jobs/single-file' });

describe('classifyFailure: one place maps an error to what happens to the file', () => {
  it('refuses the file when the service refuses the create request itself (400, 404, 413, 415)', () => {
    for (const status of [400, 404, 413, 415]) {
      expect(classifyFailure(http(status), 'create').kind, String(status)).toBe('reject');
    }
  });

  it('keeps the file for later when the service or network is unwell (401, 403, 429, 5xx, no answer)', () => {
    for (const status of [401, 403, 429, 500, 503]) {
      expect(classifyFailure(http(status), 'create').kind, String(status)).toBe('retry');
    }
    expect(
      classifyFailure(
        new ApiError(API_ERROR_CODES.network, 'no answer', { method: 'POST', route: '/x' }),
        'create',
      ).kind,
    ).toBe('retry');
    expect(classifyFailure(new Error('a bug'), 'upload')).toMatchObject({
      kind: 'retry',
      code: 'DOCEX_INTERNAL',
    });
  });

  it('recreates the job when the upload URL expired, and asks the job after a 409 or a maybe-landed retry', () => {
    expect(classifyFailure(http(403, API_ERROR_CODES.uploadExpired), 'upload').kind).toBe('recreate');
    expect(classifyFailure(http(409), 'upload').kind).toBe('check-job');
    expect(classifyFailure(http(409, API_ERROR_CODES.uploadMaybeDone), 'upload').kind).toBe('check-job');
  });

  it('refuses a file that changed or could not be read during its upload', () => {
    const changed = new DocexError(API_ERROR_CODES.sourceChanged, 'changed', { details: { sizeNow: 3 } });
    expect(classifyFailure(changed, 'upload')).toMatchObject({ kind: 'reject', details: { sizeNow: 3 } });
    expect(classifyFailure(new DocexError(API_ERROR_CODES.sourceRead, 'EIO'), 'upload').kind).toBe('reject');
  });
});

describe('nextTry: how long a failing step waits, and when its file is parked', () => {
  const fail = (err: unknown) => stepFailure(err);

  it('parks after three internal failures in a row (a bug, a journal move refused, an unexpected answer)', () => {
    for (const err of [
      new Error('a bug'),
      new DocexError('DOCEX_JOURNAL_TRANSITION', 'created -> created is not a legal move'),
      new RetryLater(API_ERROR_CODES.responseInvalid, 'unexpected answer'),
    ]) {
      expect(fail(err).kind).toBe('internal');
      expect(nextTry(fail(err), 2).kind).toBe('wait');
      expect(nextTry(fail(err), INTERNAL_TRY_LIMIT)).toMatchObject({ kind: 'park' });
    }
  });

  it('waits out a service or disk that is unwell for about a day before parking', () => {
    for (const err of [
      new RetryLater('DOCEX_NETWORK', 'reset'),
      new RetryLater('DOCEX_API_503', 'unavailable'),
      Object.assign(new Error('no space left'), { code: 'ENOSPC' }),
    ]) {
      expect(fail(err).kind).toBe('transient');
      expect(nextTry(fail(err), TRANSIENT_TRY_LIMIT - 1)).toEqual({ kind: 'wait', delayMs: 60_000 });
      expect(nextTry(fail(err), TRANSIENT_TRY_LIMIT).kind).toBe('park');
    }
    expect(fail(Object.assign(new Error('x'), { code: 'ENOSPC' })).code).toBe('DOCEX_LOCAL_IO');
  });

  it('never parks an expected wait by count (a sidecar, a batch, an upload settling): those have bounds of their own', () => {
    for (const code of [
      'DOCEX_SIDECAR_PENDING',
      'DOCEX_BATCH_PENDING',
      'DOCEX_UPLOAD_PENDING',
      'DOCEX_STOPPING',
    ] as const) {
      expect(nextTry(fail(new RetryLater(code, 'waiting')), 100_000).kind).toBe('wait');
    }
  });

  it('RetryLater is a DocexError: its code reaches the log and the CLI like any other', () => {
    const wait = new RetryLater('DOCEX_UPLOAD_PENDING', 'the job still awaits its file');
    expect(wait).toBeInstanceOf(DocexError);
    expect(wait.name).toBe('RetryLater');
    expect(fail(wait)).toEqual({
      code: 'DOCEX_UPLOAD_PENDING',
      message: 'the job still awaits its file',
      kind: 'waiting',
    });
  });

  it('backs off 1 s doubling to 60 s', () => {
    expect([1, 2, 3, 6, 7, 20].map(defaultRetryDelay)).toEqual([1_000, 2_000, 4_000, 32_000, 60_000, 60_000]);
  });
});
