/**
 * Log redaction at any depth: every value under a secret-named key is replaced, in plain objects,
 * arrays and the enumerable fields of errors, however deep (a folder's SFTP password sits at
 * `config.folders[3].source.password`). One walk per log call; objects are copied only where
 * something is replaced, so the caller's objects are never changed. fast-redact's wildcards cost
 * too much for the dozens of paths and depths this needs (figures: docs/benchmarks.md).
 */

export const REDACTED = '[redacted]';

/**
 * Keys that hold a secret in the configuration, as spelt there: printed as `[redacted]` by
 * `config show` and the start-up log (config/redact.ts), and flagged when written in plain text.
 */
export const SECRET_CONFIG_KEYS: ReadonlySet<string> = new Set([
  'clientSecret',
  'apiKey',
  'password',
  'passphrase',
  'privateKey',
  'secret',
  'secrets',
  'token',
]);

/**
 * Keys (compared in lower case) whose value is a secret wherever it appears in a log object: the
 * configuration's, and the names secrets have on the wire (headers, key material, signed URLs).
 */
export const SECRET_LOG_KEYS: ReadonlySet<string> = new Set([
  ...[...SECRET_CONFIG_KEYS].map((key) => key.toLowerCase()),
  'client_secret',
  'x-api-key',
  'clientkeypem',
  'keypem',
  'key',
  'signature',
  'webhook-signature',
  'accesstoken',
  'access_token',
  'refreshtoken',
  'fileuploadurl',
  'uploadurl',
  'downloadurl',
  'url',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'credentials',
]);

const MAX_DEPTH = 10;

function isSecretKey(key: string): boolean {
  return SECRET_LOG_KEYS.has(key.toLowerCase());
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** An error with secret fields becomes a plain copy that keeps what pino's err serializer shows. */
function errorCopy(err: Error, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    type: err.constructor?.name ?? 'Error',
    message: err.message,
    stack: err.stack,
    ...fields,
  };
}

function walk(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = walk(item, depth + 1, seen);
      if (next !== item) {
        out ??= value.slice();
        out[i] = next;
      }
    });
    return out ?? value;
  }
  const isError = value instanceof Error;
  if (!isError && !isPlain(value)) return value;
  let changed: Record<string, unknown> | undefined;
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const item = source[key];
    const next =
      isSecretKey(key) && item !== undefined && item !== null ? REDACTED : walk(item, depth + 1, seen);
    if (next !== item) {
      changed ??= { ...source };
      changed[key] = next;
    }
  }
  if (isError) {
    // `cause` is not enumerable, but pino's err serializer prints it.
    const cause = (value as Error & { cause?: unknown }).cause;
    const nextCause = walk(cause, depth + 1, seen);
    if (!changed && nextCause === cause) return value;
    return errorCopy(value as Error, {
      ...(changed ?? source),
      ...(cause === undefined ? {} : { cause: nextCause }),
    });
  }
  return changed ?? value;
}

/** `value` with every secret-named field replaced by `[redacted]`; the same object when none. */
export function redactDeep<T>(value: T): T {
  return walk(value, 0, new WeakSet()) as T;
}
