/**
 * The retry policy of every step that can fail, in one place: the intake's steps (pipeline) and the
 * return path's downloads ask it. A failure's class follows from its code's outcome
 * (core/error-codes.ts); it is one of three:
 * - waiting (a sidecar or a batch's PDFs to come, an upload to settle, the agent stopping): the
 *   wait has a bound of its own (SIDECAR_WAIT_MS, the upload window), so no count parks it;
 * - transient (network, 5xx, 429, the token host, a full disk): the service or the machine is
 *   unwell, not the work; tried again with a growing wait, parked after TRANSIENT_TRY_LIMIT tries
 *   in a row (about a day at a 60 s wait);
 * - internal (a bug, a journal move refused, an answer of an unexpected shape, a file that no
 *   longer builds the rows already recorded): trying again will not help; parked after
 *   INTERNAL_TRY_LIMIT tries in a row.
 * Parked work waits for an operator; whatever the class, an irreversible call is never repeated
 * blindly (the pipeline's send gate).
 */

import { type ErrorOutcome, outcomeOf } from '../core/error-codes.js';

export const INTERNAL_TRY_LIMIT = 3;
export const TRANSIENT_TRY_LIMIT = 1_500;
const MAX_DELAY_MS = 60_000;

export type FailureClass = 'waiting' | 'transient' | 'internal';

/** The class of a step's failure, by the outcome of its code. */
const CLASS_OF_OUTCOME: Record<ErrorOutcome, FailureClass> = {
  waiting: 'waiting',
  internal: 'internal',
  // A content check's refusal raised by a later step (a payload file whose rows are recorded but
  // no longer build): its bytes changed under us, trying again will not help.
  refusal: 'internal',
  transient: 'transient',
  unreachable: 'transient',
  // Met outside the send that refuses the file: read again later.
  unsendable: 'transient',
  // Fixed by the operator (a folder made real again, a permission given): the next try succeeds.
  operator: 'transient',
  // Recorded, not raised; should one be, it is tried again like any other.
  final: 'transient',
};

export interface StepFailure {
  code: string;
  message: string;
  kind: FailureClass;
}

/**
 * What an error is, for the retry decision and the log: its DOCEX_ code; a system error of the
 * machine (ENOSPC, EIO, EACCES) is the disk's, not the work's (DOCEX_LOCAL_IO, transient);
 * anything else is a bug (DOCEX_INTERNAL).
 */
export function stepFailure(err: unknown): StepFailure {
  const message = err instanceof Error ? err.message : String(err);
  const raw = (err as { code?: unknown } | undefined)?.code;
  const code =
    typeof raw === 'string' && raw.startsWith('DOCEX_')
      ? raw
      : typeof raw === 'string' && /^E[A-Z]+$/.test(raw)
        ? 'DOCEX_LOCAL_IO'
        : 'DOCEX_INTERNAL';
  return { code, message, kind: failureClass(code) };
}

/** A code no registry entry declares is counted transient, as the service's or the machine's. */
export function failureClass(code: string): FailureClass {
  const outcome = outcomeOf(code);
  return outcome ? CLASS_OF_OUTCOME[outcome] : 'transient';
}

export type NextTry = { kind: 'wait'; delayMs: number } | { kind: 'park'; reason: string };

/**
 * After try number `tries` (1-based) failed with `failure`: wait (how long) or park. `delayMs`:
 * the wait before try n+1 (the intake's default, or the return path's own intervals).
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

/** 1 s, doubling to 60 s. */
export function defaultRetryDelay(n: number): number {
  return Math.min(MAX_DELAY_MS, 1_000 * 2 ** Math.min(n - 1, 6));
}
