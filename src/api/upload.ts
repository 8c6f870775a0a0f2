import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { API_ERROR_CODES, ApiError, redactUrlParts, transportError } from './errors.js';
import { answerError } from './exchange.js';
import type { RetryPolicy } from './retry.js';
import { type Sleep, withRetry } from './retry-loop.js';

/** What errors and logs call the pre-signed URL: never the URL itself. */
export const UPLOAD_ROUTE = '{fileUploadUrl}';

export interface FileTransferDeps {
  /** Plain TLS agent (no client certificate) for the files host. */
  dispatcher: Dispatcher;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  sleep?: Sleep;
}

export interface UploadResult {
  md5: string;
  size: number;
}

/** Passes bytes through while hashing them, so nothing is held in memory. */
export class HashingStream extends Transform {
  private readonly hash = createHash('md5');
  bytes = 0;

  constructor(private readonly onProgress?: (bytes: number) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onProgress?.(this.bytes);
    done(null, chunk);
  }

  digestHex(): string {
    return this.hash.digest('hex');
  }
}

export interface UploadOptions {
  signal?: AbortSignal;
  contentType?: string;
  /** Bytes read from the file so far in this attempt (for progress logs of big files). */
  onProgress?: (bytes: number) => void;
}

/** `"abc"`, `W/"abc"` or `abc` to `abc`, lower case. */
export function normaliseEtag(etag: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(etag) ? etag[0] : etag;
  if (!raw) return undefined;
  return raw
    .trim()
    .replace(/^W\//i, '')
    .replace(/^"(.*)"$/, '$1')
    .toLowerCase();
}

/**
 * PUTs a file to a pre-signed URL as a stream (Content-Length from stat, MD5 computed on the way)
 * and checks the ETag. A retry re-opens the file from the start.
 */
export async function uploadFile(
  deps: FileTransferDeps,
  url: string,
  filePath: string,
  options: UploadOptions = {},
): Promise<UploadResult> {
  const { log, clock } = deps;
  const signal = options.signal;
  return withRetry(
    {
      policy: deps.policy,
      clock,
      log,
      method: 'PUT',
      route: UPLOAD_ROUTE,
      retryable: true,
      ...(signal ? { signal } : {}),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
    },
    async (attempt) => {
      const { size } = await stat(filePath);
      const file = createReadStream(filePath);
      const hasher = new HashingStream(options.onProgress);
      // pipeline() destroys the file stream if undici abandons the body (reset, timeout).
      pipeline(file, hasher, () => {});
      const started = performance.now();
      let answer: Dispatcher.ResponseData;
      try {
        answer = await request(url, {
          dispatcher: deps.dispatcher,
          method: 'PUT',
          headers: {
            'content-length': String(size),
            'content-type': options.contentType ?? 'application/octet-stream',
          },
          body: hasher,
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        hasher.destroy();
        if (signal?.aborted) throw err;
        throw transportError(err, 'PUT', UPLOAD_ROUTE);
      }
      const text = redactUrlParts(await answer.body.text().catch(() => ''), url);
      const ms = Math.round(performance.now() - started);
      log.debug(
        { method: 'PUT', route: UPLOAD_ROUTE, status: answer.statusCode, size, ms, attempt },
        'api request',
      );
      if (answer.statusCode === 403) {
        throw answerError(
          { status: answer.statusCode, headers: answer.headers, text },
          'PUT',
          UPLOAD_ROUTE,
          clock.now(),
          API_ERROR_CODES.uploadExpired,
        );
      }
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        throw answerError(
          { status: answer.statusCode, headers: answer.headers, text },
          'PUT',
          UPLOAD_ROUTE,
          clock.now(),
        );
      }
      const md5 = hasher.bytes === size ? hasher.digestHex() : `incomplete-${hasher.bytes}`;
      const etag = normaliseEtag(answer.headers['etag']);
      if (etag !== md5) {
        throw new ApiError(
          API_ERROR_CODES.etagMismatch,
          `PUT ${UPLOAD_ROUTE}: ETag ${etag ?? '(none)'} does not match the MD5 ${md5} of the ${size} bytes sent`,
          { method: 'PUT', route: UPLOAD_ROUTE, status: answer.statusCode },
        );
      }
      log.info({ size, ms }, 'file uploaded');
      return { md5, size };
    },
  );
}
