import { ERROR_CODES, type ErrorCodeOf } from '../../core/error-codes.js';

/**
 * Every reason a dropped file is rejected before anything is sent has a stable code an operator can
 * grep, declared with its meaning in core/error-codes.ts (group `inspect`) and listed in
 * docs/errors.md. Payload building shares the codes so a file has one vocabulary from the first
 * byte to the last row.
 */
export type InputErrorCode = ErrorCodeOf<'inspect'>;

/** The content checks' codes, each with its one-line meaning. */
export const INPUT_ERROR_CODES = Object.fromEntries(
  Object.entries(ERROR_CODES)
    .filter(([, info]) => info.group === 'inspect')
    .map(([code, info]) => [code, info.meaning]),
) as Record<InputErrorCode, string>;

/**
 * Codes a file still being written or chmod-ed can show (producers that chmod after writing leave
 * a short empty or unreadable window): a verdict with one of them is not kept for the same bytes.
 */
export const MAYBE_TRANSIENT_INPUT_CODES: ReadonlySet<InputErrorCode> = new Set([
  'DOCEX_INPUT_UNREADABLE',
  'DOCEX_INPUT_EMPTY',
  'DOCEX_INPUT_PDF_TRUNCATED',
  'DOCEX_INPUT_ZIP_CORRUPT',
]);

/** A rejected file: a code and one sentence naming the file and what is wrong. */
export interface InputRejection {
  ok: false;
  code: InputErrorCode;
  reason: string;
  details?: Record<string, unknown>;
}

export function reject(
  code: InputErrorCode,
  reason: string,
  details?: Record<string, unknown>,
): InputRejection {
  return details === undefined ? { ok: false, code, reason } : { ok: false, code, reason, details };
}

/** Keys that reach an object's prototype when assigned: never taken from a dropped file. */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const isUnsafeKey = (key: string): boolean => UNSAFE_KEYS.has(key);

/** A file name as it appears in a reason (domain/file-names.ts, shared with the sandbox). */
export { quoteName } from '../../domain/file-names.js';

export function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return m >= 10 || Number.isInteger(m) ? `${Math.round(m)} MiB` : `${m.toFixed(1)} MiB`;
}
