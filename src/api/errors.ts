import type { ErrorCode } from '../core/error-codes.js';
import { DocexError } from '../core/errors.js';

/** Problem details (RFC 9457) as far as the client keeps them: never headers or URLs. */
export interface ApiProblem {
  title?: string;
  detail?: string;
  errors?: { field?: string; message: string }[];
}

export interface ApiErrorInit {
  /** HTTP status, when the service answered at all. */
  status?: number;
  method: string;
  /** The route template (`/jobs/{id}`), never a full or pre-signed URL. */
  route: string;
  problem?: ApiProblem;
  /** The answer body when it was not JSON, cut short. */
  text?: string;
  /** Milliseconds the service asked us to wait (Retry-After). */
  retryAfterMs?: number;
  cause?: unknown;
}

/** Stable codes besides `DOCEX_API_<status>`, by role; declared in core/error-codes.ts. */
export const API_ERROR_CODES = {
  authToken: 'DOCEX_AUTH_TOKEN',
  tls: 'DOCEX_TLS',
  network: 'DOCEX_NETWORK',
  etagMismatch: 'DOCEX_UPLOAD_ETAG_MISMATCH',
  uploadExpired: 'DOCEX_UPLOAD_EXPIRED',
  responseInvalid: 'DOCEX_RESPONSE_INVALID',
  invalidArgument: 'DOCEX_INVALID_ARGUMENT',
  downloadSize: 'DOCEX_DOWNLOAD_SIZE_MISMATCH',
  /** A 409 to a retried upload whose earlier attempt may have landed: check GET /jobs/{id}. */
  uploadMaybeDone: 'DOCEX_UPLOAD_MAYBE_DONE',
  /** The file to upload could not be opened or read. */
  sourceRead: 'DOCEX_SOURCE_READ',
  /** The file to upload changed (size, mtime, or content against its recorded SHA-256). */
  sourceChanged: 'DOCEX_SOURCE_CHANGED',
  /** A local write of a download failed (ENOSPC, EIO, a missing directory). */
  localIo: 'DOCEX_LOCAL_IO',
} as const satisfies Record<string, ErrorCode>;

const MAX_TEXT = 500;

/** An error of a call to the service. Its message and JSON carry no secret and no pre-signed URL. */
export class ApiError extends DocexError {
  readonly status: number | undefined;
  readonly method: string;
  readonly route: string;
  readonly problem: ApiProblem | undefined;
  readonly text: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, init: ApiErrorInit) {
    const text = init.text === undefined ? undefined : init.text.slice(0, MAX_TEXT);
    super(code, message, {
      cause: init.cause,
      details: {
        method: init.method,
        route: init.route,
        ...(init.status === undefined ? {} : { status: init.status }),
        ...(init.problem ? { problem: init.problem } : {}),
        ...(text === undefined ? {} : { text }),
        ...(init.retryAfterMs === undefined ? {} : { retryAfterMs: init.retryAfterMs }),
      },
    });
    this.name = 'ApiError';
    this.status = init.status;
    this.method = init.method;
    this.route = init.route;
    this.problem = init.problem;
    this.text = text;
    this.retryAfterMs = init.retryAfterMs;
  }
}

export function isApiError(err: unknown, code?: ErrorCode): err is ApiError {
  return err instanceof ApiError && (code === undefined || err.code === code);
}

/** The error of a non-2xx answer: `DOCEX_API_<status>`, with the problem's detail in the message. */
export function httpError(
  init: ApiErrorInit & { status: number },
  code: ErrorCode = `DOCEX_API_${init.status}`,
): ApiError {
  const reason = init.problem?.detail ?? init.problem?.title ?? init.text?.trim().slice(0, 200);
  const message = `${init.method} ${init.route} answered ${init.status}${reason ? `: ${reason}` : ''}`;
  return new ApiError(code, message, init);
}

/** Node and OpenSSL codes of a failed handshake or an untrusted or unsuitable certificate. */
const TLS_CODES = new Set([
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
  'EPROTO',
  'ERR_SSL_NO_SUITABLE_SIGNATURE_ALGORITHM',
  'ERR_OSSL_PEM_NO_START_LINE',
  'ERR_OSSL_X509_KEY_VALUES_MISMATCH',
]);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

export function isTlsFailure(err: unknown): boolean {
  return errorCodes(err).some(
    (code) => TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'),
  );
}

/** Finds the TLS alert behind a dropped connection to `url` (see TlsDiagnostics). */
export type TlsExplainer = (err: unknown, url: string) => Promise<string | undefined>;

/** Maps what undici or Node threw (no answer at all) to DOCEX_TLS or DOCEX_NETWORK. */
export function transportError(err: unknown, method: string, route: string, alert?: string): ApiError {
  if (err instanceof ApiError) return err;
  const codes = errorCodes(err);
  const first = alert ?? codes[0] ?? (err as Error)?.name ?? 'unknown';
  if (alert !== undefined || isTlsFailure(err)) {
    return new ApiError(API_ERROR_CODES.tls, `${method} ${route}: TLS handshake failed (${first})`, {
      method,
      route,
      cause: err,
    });
  }
  return new ApiError(API_ERROR_CODES.network, `${method} ${route}: no answer (${first})`, {
    method,
    route,
    cause: err,
  });
}

/** True for connection-level failures worth a retry (not TLS: a bad certificate stays bad). */
export function isRetryableTransportError(err: unknown): boolean {
  if (isTlsFailure(err)) return false;
  const codes = errorCodes(err);
  return codes.some((code) => NETWORK_CODES.has(code));
}

/** Shorter values are left alone: redacting them would shred ordinary text. */
const MIN_SECRET_LENGTH = 6;

/**
 * Replaces every secret in `text`, as is and in its URL-encoded forms (a form body or a query
 * echoed back), with `[redacted]`. Servers and proxies echo requests in their error bodies.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  // Every form redacted is at least that long: an empty answer (every PUT's) costs nothing.
  if (text.length < MIN_SECRET_LENGTH) return text;
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(new URLSearchParams({ s: secret }).toString().slice(2));
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    out = out.split(form).join('[redacted]');
  }
  return out;
}

/** The problem details with every secret redacted from its texts. */
export function redactProblem(problem: ApiProblem, secrets: readonly string[]): ApiProblem {
  const r = (text: string) => redactSecrets(text, secrets);
  return {
    ...(problem.title === undefined ? {} : { title: r(problem.title) }),
    ...(problem.detail === undefined ? {} : { detail: r(problem.detail) }),
    ...(problem.errors === undefined
      ? {}
      : {
          errors: problem.errors.map((e) => ({
            ...(e.field === undefined ? {} : { field: r(e.field) }),
            message: r(e.message),
          })),
        }),
  };
}

/**
 * The secrets a pre-signed URL carries: the URL, its query and every longer query value. Object
 * stores echo the request (signature included) in their error bodies.
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const secrets = [url, parsed.search, parsed.search.slice(1)];
  for (const [, value] of parsed.searchParams) secrets.push(value);
  return secrets;
}
