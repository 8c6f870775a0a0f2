import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES, ApiError } from '../../src/api/index.js';
import { DocexError } from '../../src/core/errors.js';
import { classifyFailure } from '../../src/pipeline/retry-policy.js';

const http = (status: number, code = `DOCEX_API_${status}`) =>
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
