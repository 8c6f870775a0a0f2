/**
 * The retry policy of a file's steps, in one place. `classifyFailure` maps an error met while
 * submitting a file to what happens to the file: refuse it (error folder), recreate its job
 * (window over), ask the service whether an upload landed, or keep it and try again later. When a
 * step must wait, `nextTry` says how long, and when to stop trying and park the file:
 * - waiting (a sidecar or a batch's PDFs to come, an upload to settle, the agent stopping): the
 *   wait has a bound of its own (SIDECAR_WAIT_MS, the upload window), so no count parks it;
 * - transient (network, 5xx, 429, the token host, a full disk): the service or the machine is
 *   unwell, not the file; tried again with a backoff of 1 s doubling to 60 s, parked after
 *   TRANSIENT_TRY_LIMIT tries in a row (about a day at the longest wait);
 * - internal (a bug, a journal move refused, an answer of an unexpected shape, a file that no
 *   longer builds the rows already recorded): trying again will not help; parked after
 *   INTERNAL_TRY_LIMIT tries in a row.
 * Whatever the class, an irreversible call is never repeated blindly: that is the send gate's job.
 */
import { API_ERROR_CODES, ApiError } from '../api/index.js';
import { isDocexError } from '../core/errors.js';
import { RetryLater } from './types.js';

export const INTERNAL_TRY_LIMIT = 3;
export const TRANSIENT_TRY_LIMIT = 1_500;
const MAX_DELAY_MS = 60_000;

export type FailureClass = 'waiting' | 'transient' | 'internal';

const WAITING_CODES = new Set([
  'DOCEX_STOPPING',
  'DOCEX_SIDECAR_PENDING',
  'DOCEX_BATCH_PENDING',
  'DOCEX_UPLOAD_PENDING',
]);

const INTERNAL_CODES = new Set([
  'DOCEX_INTERNAL',
  'DOCEX_JOURNAL_TRANSITION',
  'DOCEX_JOURNAL_FIELDS',
  'DOCEX_JOURNAL_ROWS',
  'DOCEX_JOURNAL_UNKNOWN_ITEM',
  API_ERROR_CODES.responseInvalid,
]);

export interface StepFailure {
  code: string;
  message: string;
  kind: FailureClass;
}

/** What a step's error is, for the retry decision and the log. */
export function stepFailure(err: unknown): StepFailure {
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof RetryLater || isDocexError(err) ? err.code : systemErrorCode(err);
  return { code, message, kind: failureClass(code) };
}

/** A system error of the machine (ENOSPC, EIO, EACCES) is the disk's, not the file's: transient. */
function systemErrorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? 'DOCEX_LOCAL_IO' : 'DOCEX_INTERNAL';
}

export function failureClass(code: string): FailureClass {
  if (WAITING_CODES.has(code)) return 'waiting';
  // A payload file whose rows are recorded but no longer build: its bytes changed under us.
  if (INTERNAL_CODES.has(code) || /^DOCEX_INPUT_/.test(code)) return 'internal';
  return 'transient';
}

export type NextTry = { kind: 'wait'; delayMs: number } | { kind: 'park'; reason: string };

/**
 * After try number `tries` (1-based) failed with `failure`: wait (how long) or park. `delayMs`
 * overrides the backoff (tests).
 */
export function nextTry(
  failure: StepFailure,
  tries: number,
  delayMs: (n: number) => number = defaultRetryDelay,
): NextTry {
  const limit =
    failure.kind === 'internal'
      ? INTERNAL_TRY_LIMIT
      : failure.kind === 'transient'
        ? TRANSIENT_TRY_LIMIT
        : Number.POSITIVE_INFINITY;
  if (tries >= limit) {
    return {
      kind: 'park',
      reason: `${tries} tries in a row failed (${failure.code}: ${failure.message})`,
    };
  }
  return { kind: 'wait', delayMs: delayMs(tries) };
}

export function defaultRetryDelay(n: number): number {
  return Math.min(MAX_DELAY_MS, 1_000 * 2 ** Math.min(n - 1, 6));
}

export type FailureOutcome =
  | { kind: 'reject'; code: string; reason: string; details?: Record<string, unknown> }
  | { kind: 'recreate'; code: string; reason: string }
  | { kind: 'check-job'; code: string; reason: string }
  | { kind: 'retry'; code: string; reason: string };

/** Answers that say the request itself (so the file or its workflow) is wrong: sending again will not help. */
const REFUSING_STATUSES = new Set([400, 404, 413, 415, 422]);

export function classifyFailure(err: unknown, step: 'create' | 'upload'): FailureOutcome {
  const reason = err instanceof Error ? err.message : String(err);
  if (!isDocexError(err)) return { kind: 'retry', code: 'DOCEX_INTERNAL', reason };
  const code = err.code;
  if (code === API_ERROR_CODES.sourceChanged || code === API_ERROR_CODES.sourceRead) {
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
