/**
 * Expected operational errors as one short record: code, message and the chain of causes, no
 * stack. A refused connection, a full disk or an answer of 503 is something the agent plans for;
 * its stack (a long line, in every retry) tells an operator nothing the code does not.
 * Errors that are not expected (a TypeError, an error without a code anywhere in its chain) keep
 * their stack: those are bugs, and the stack is what finds them.
 */
import { stdSerializers } from 'pino';
import { DocexError } from './errors.js';

/** Node's own ERR_ codes are mostly programming errors; these few are the network's doing. */
const OPERATIONAL_NODE_CODES = /^ERR_(?:TLS|SSL|SOCKET|STREAM_PREMATURE_CLOSE|HTTP2_STREAM_ERROR)/;

function hasOperationalCode(err: Error): boolean {
  if (err instanceof DocexError) return true;
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string' || code === '') return false;
  // errno names (ECONNREFUSED, ENOSPC), undici (UND_ERR_SOCKET), OpenSSL (CERT_HAS_EXPIRED).
  return !code.startsWith('ERR_') || OPERATIONAL_NODE_CODES.test(code);
}

/** True when the error and every error in its cause chain carry an operational code. */
export function isExpectedError(err: unknown, depth = 0): err is Error {
  if (!(err instanceof Error) || depth > 8) return false;
  if (!hasOperationalCode(err)) return false;
  const cause = (err as { cause?: unknown }).cause;
  return !(cause instanceof Error) || isExpectedError(cause, depth + 1);
}

const codeOf = (err: Error): string | undefined => {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
};

/** `message (CODE) <- message (CODE)` for each cause below `err`. */
function causeChain(err: Error): string | undefined {
  const parts: string[] = [];
  let cause = (err as { cause?: unknown }).cause;
  for (let depth = 0; cause instanceof Error && depth < 8; depth++) {
    const code = codeOf(cause);
    parts.push(code && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message);
    cause = (cause as { cause?: unknown }).cause;
  }
  return parts.length === 0 ? undefined : parts.join(' <- ');
}

/** The one-line record of an expected error: its enumerable fields, type, code, message, causes. */
export function compactError(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of Object.keys(err)) {
    if (key !== 'stack' && key !== 'cause') fields[key] = (err as unknown as Record<string, unknown>)[key];
  }
  const cause = causeChain(err);
  return {
    ...fields,
    type: err.constructor?.name ?? err.name,
    ...(codeOf(err) ? { code: codeOf(err) } : {}),
    message: err.message,
    ...(cause ? { cause } : {}),
  };
}

/** pino's `err` serializer: expected errors compact, others as pino prints them (with stack). */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  return isExpectedError(err) ? compactError(err) : stdSerializers.err(err);
}
