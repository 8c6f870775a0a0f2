/**
 * pg's errors as the journal's: a DocexError whose message names the server (describeLocation, no
 * password) and what was being done, with PostgreSQL's SQLSTATE when it gave one. pg's error is
 * not kept as the cause: its fields (detail, where) can quote a row's values, an upload URL among
 * them (a bug of the agent's own, a TypeError, is kept, for its stack). The message itself loses
 * URL queries and any occurrence of the password.
 */
import type { ErrorCode } from '../../core/error-codes.js';
import { DocexError } from '../../core/errors.js';
import { REDACTED } from '../../core/log-redact.js';
import { stripUrlQueries } from '../redact.js';

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** PostgreSQL's five-character error code, when the error is the server's. */
export function sqlStateOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && SQLSTATE.test(code) ? code : undefined;
}

/**
 * Whether the client's connection can no longer be trusted: a network or protocol error (no
 * SQLSTATE: reset, terminated, the client's own read timeout), a connection exception (class 08),
 * or the server ending the session (57P01-57P05). The journal's own refusals are not.
 */
export function isConnectionBroken(err: unknown): boolean {
  if (err instanceof DocexError) return false;
  const state = sqlStateOf(err);
  if (state === undefined) return true;
  return state.startsWith('08') || /^57P0[1-5]$/.test(state);
}

/**
 * A statement the server refused as wrong (bad data, a broken constraint, SQL it cannot run): a
 * bug, DOCEX_INTERNAL. Everything else (no connection, timeouts, authentication, grants, a
 * read-only or shutting-down server, resources, deadlocks) is the database being unavailable.
 */
function codeFor(state: string | undefined, programming: boolean): ErrorCode {
  if (programming) return 'DOCEX_INTERNAL';
  if (state === undefined || state === '42501') return 'DOCEX_JOURNAL_UNAVAILABLE';
  return /^(22|23|42)/.test(state) ? 'DOCEX_INTERNAL' : 'DOCEX_JOURNAL_UNAVAILABLE';
}

/** A bug of the agent's own code (not pg's or the network's): kept as the cause, for its stack. */
function isProgrammingError(err: unknown): err is Error {
  return (
    err instanceof TypeError ||
    err instanceof RangeError ||
    err instanceof ReferenceError ||
    err instanceof SyntaxError
  );
}

export interface FailureContext {
  /** describeLocation's text: the URL without its password. */
  location: string;
  /** What the journal was doing: `recordClaim`, `migrate`, `connect`. */
  doing: string;
  /** Texts that must never appear in a message (the password). */
  secrets: readonly string[];
  details?: Record<string, unknown> | undefined;
}

export function redactMessage(text: string, secrets: readonly string[]): string {
  let out = stripUrlQueries(text);
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join(REDACTED);
  return out;
}

/** The error callers see; one of the journal's own DocexErrors passes unchanged. */
export function journalFailure(err: unknown, context: FailureContext): DocexError {
  if (err instanceof DocexError) return err;
  const state = sqlStateOf(err);
  const errno = (err as { code?: unknown } | null)?.code;
  const raw = err instanceof Error ? err.message : String(err);
  // Node's AggregateError (every address of a host refused) has an empty message and only a code.
  const said = raw !== '' ? raw : typeof errno === 'string' ? errno : 'no answer';
  const suffix = state ? ` (SQLSTATE ${state})` : '';
  const programming = isProgrammingError(err);
  return new DocexError(
    codeFor(state, programming),
    `the journal at ${context.location}: ${context.doing} failed: ${redactMessage(said, context.secrets)}${suffix}`,
    {
      ...(programming ? { cause: err } : {}),
      details: {
        location: context.location,
        ...(state ? { sqlstate: state } : typeof errno === 'string' ? { errno } : {}),
        ...context.details,
      },
    },
  );
}
