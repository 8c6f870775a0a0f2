import type { ErrorCode } from './error-codes.js';

/**
 * One error base class for the whole agent. Every error carries a stable `code`, declared in
 * core/error-codes.ts, that users can grep in logs and look up in docs/errors.md. Messages never
 * contain secrets.
 */
export class DocexError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DocexError';
    this.code = code;
    this.details = options?.details;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

export function isDocexError(err: unknown, code?: ErrorCode): err is DocexError {
  return err instanceof DocexError && (code === undefined || err.code === code);
}
