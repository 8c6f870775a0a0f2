/**
 * How the intake meets an error of its two service calls: `classifyFailure` maps it to what
 * happens to the file: reject it (error folder), recreate its job (window over), ask the service
 * whether an upload landed, or keep it and try again later. How long to wait, and when to park, is
 * the shared retry policy's (domain/retry-policy.ts).
 */
import { API_ERROR_CODES, ApiError } from '../api/index.js';
import { type ErrorCode, outcomeOf } from '../core/error-codes.js';
import { isDocexError } from '../core/errors.js';

export type FailureOutcome =
  | { kind: 'reject'; code: ErrorCode; reason: string; details?: Record<string, unknown> }
  | { kind: 'recreate'; code: ErrorCode; reason: string }
  | { kind: 'check-job'; code: ErrorCode; reason: string }
  | { kind: 'retry'; code: ErrorCode; reason: string };

/** Answers that say the request itself (so the file or its workflow) is wrong: sending again will not help. */
const REFUSING_STATUSES = new Set([400, 404, 413, 415, 422]);

export function classifyFailure(err: unknown, step: 'create' | 'upload'): FailureOutcome {
  const reason = err instanceof Error ? err.message : String(err);
  if (!isDocexError(err)) return { kind: 'retry', code: 'DOCEX_INTERNAL', reason };
  const code = err.code;
  // The file cannot be sent as claimed (unreadable, changed since its claim).
  if (outcomeOf(code) === 'unsendable') {
    return { kind: 'reject', code, reason, ...(err.details ? { details: err.details } : {}) };
  }
  if (code === API_ERROR_CODES.uploadExpired) return { kind: 'recreate', code, reason };
  if (code === API_ERROR_CODES.uploadMaybeDone) return { kind: 'check-job', code, reason };
  if (err instanceof ApiError && err.status !== undefined) {
    if (step === 'upload' && err.status === 409) return { kind: 'check-job', code, reason };
    if (step === 'create' && REFUSING_STATUSES.has(err.status)) {
      const problem = err.problem;
      return { kind: 'reject', code, reason, ...(problem ? { details: { problem } } : {}) };
    }
  }
  return { kind: 'retry', code, reason };
}
