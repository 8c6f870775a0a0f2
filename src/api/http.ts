/**
 * The one way the clients send a request. Every request to the API host, the token host and the
 * pre-signed URLs goes through `send`, which is where what every request needs is written once:
 * it is timed, the observer hears of it (metrics, reachability), answered requests get their
 * debug line, a missing answer becomes DOCEX_TLS or DOCEX_NETWORK, the secrets the request
 * carries are redacted from whatever the answer says, and an answer body left unread is released.
 * What differs between requests (auth headers, the body, what an answer means) stays with the
 * caller. Only undici's public API: `request` on the caller's dispatcher, never the global one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/error-codes.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { answerError } from './answer.js';
import { type ApiError, redactSecrets, type TlsExplainer, transportError } from './errors.js';
import { type ApiObserver, notify } from './observer.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';

/** What requests go out through: the connection pool, and who hears of each request. */
export interface HttpPort {
  dispatcher: Dispatcher;
  clock: Clock;
  observer?: ApiObserver | undefined;
  /** Names the TLS alert behind a dropped connection (the mTLS hosts; see TlsDiagnostics). */
  explainTls?: TlsExplainer | undefined;
}

export interface HttpRequest {
  url: string;
  method: HttpMethod;
  /** The route template (`/jobs/{id}`, `{fileUploadUrl}`): all that logs, metrics and errors show of the URL. */
  route: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable | undefined;
  signal?: AbortSignal | undefined;
  /** The caller's logger (with its folder, file and job fields) for the request's debug line. */
  log: Logger;
  /**
   * What the request carries that must never come back in our errors: the API key, the bearer
   * token, the client secret, a pre-signed URL's parts. Servers and proxies echo requests.
   */
  secrets: readonly string[];
  /** More fields for the debug line (the upload's size and attempt). */
  fields?: Record<string, unknown>;
  /**
   * Runs first when no answer came: the request's own clean-up, and a local cause found here (an
   * unreadable source file) is thrown as the request's error instead of DOCEX_NETWORK.
   */
  onNoAnswer?: (err: unknown) => Promise<void> | void;
  /** Hears the outcome as the observer does (status or `error`, seconds): the upload's own event. */
  onOutcome?: (status: number | 'error', seconds: number) => void;
}

/** An answer as the caller's `read` sees it. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it streams: data (a download), never to be put in an error. */
  body: Readable;
  /** The whole body as text, with the request's secrets redacted. */
  text(): Promise<string>;
  /** The error this answer means (DOCEX_API_<status> unless `code`), from its text, secrets redacted. */
  error(text: string, code?: ErrorCode): ApiError;
  /** Adds fields to the request's debug line: what only the read knows (the bytes received). */
  note(fields: Record<string, unknown>): void;
}

/** An answer read whole: status, headers, the text (secrets redacted) and the error it means. */
export interface TextAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  error(code?: ErrorCode): ApiError;
}

/**
 * Sends `req` and hands the answer to `read`, which consumes its body. The request is timed until
 * `read` settles. An error `read` throws that is not the client's own (a connection dropped while
 * the body streamed) becomes DOCEX_NETWORK or DOCEX_TLS; an aborted request throws the signal's
 * reason as it came.
 */
export async function send<T>(
  port: HttpPort,
  req: HttpRequest,
  read: (answer: Answer) => Promise<T>,
): Promise<T> {
  const started = performance.now();
  const fields: Record<string, unknown> = { ...req.fields };
  const finished = (status: number | 'error') => {
    const seconds = (performance.now() - started) / 1000;
    req.onOutcome?.(status, seconds);
    notify(port.observer, 'request', { method: req.method, route: req.route, status, seconds });
    if (status === 'error') return;
    const ms = Math.round(seconds * 1000);
    req.log.debug({ method: req.method, route: req.route, status, ...fields, ms }, 'api request');
  };

  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(req.url, {
      dispatcher: port.dispatcher,
      method: req.method,
      ...(req.headers ? { headers: req.headers } : {}),
      ...(req.body === undefined ? {} : { body: req.body }),
      ...(req.signal ? { signal: req.signal } : {}),
    });
  } catch (err) {
    finished('error');
    try {
      await req.onNoAnswer?.(err);
    } catch (local) {
      if (!req.signal?.aborted) throw local;
    }
    throw await noAnswer(port, req, err);
  }

  const { body, statusCode: status, headers } = answer;
  try {
    const value = await read({
      status,
      headers,
      body,
      text: async () => redactSecrets(await body.text(), req.secrets),
      error: (text, code) =>
        answerError({ status, headers, text }, req.method, req.route, port.clock.now(), code, req.secrets),
      note: (more) => Object.assign(fields, more),
    });
    finished(status);
    return value;
  } catch (err) {
    if (isDocexError(err) && !req.signal?.aborted) {
      finished(status);
      throw err;
    }
    finished('error');
    throw await noAnswer(port, req, err);
  } finally {
    // An answer body left unread would hold its connection until the body timeout.
    if (!body.readableEnded && !body.destroyed) body.destroy();
  }
}

/** Sends `req` and reads the whole answer as text (small answers: the API and the token host). */
export function exchange(port: HttpPort, req: HttpRequest): Promise<TextAnswer> {
  return send(port, req, async (answer) => textAnswer(answer, await answer.text()));
}

/** The answer with its body read as `text`. */
export function textAnswer(answer: Answer, text: string): TextAnswer {
  return {
    status: answer.status,
    headers: answer.headers,
    text,
    error: (code) => answer.error(text, code),
  };
}

/** What a request without an answer throws: the abort as it came, else DOCEX_TLS or DOCEX_NETWORK. */
async function noAnswer(port: HttpPort, req: HttpRequest, err: unknown): Promise<unknown> {
  if (req.signal?.aborted) return err;
  const alert = port.explainTls ? await port.explainTls(err, req.url).catch(() => undefined) : undefined;
  return transportError(err, req.method, req.route, alert);
}
