import { createHash, type Hash } from 'node:crypto';
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import { GarbagePacer } from '../core/collect.js';
import type { Logger } from '../core/logger.js';
import { API_ERROR_CODES, ApiError, urlSecrets } from './errors.js';
import { send, textAnswer } from './http.js';
import { type ApiObserver, notify } from './observer.js';
import type { RetryPolicy } from './retry.js';
import { type Sleep, withRetry } from './retry-loop.js';
import {
  currentStamp,
  isSameStamp,
  openSource,
  type SourceStamp,
  sourceChangedError,
  sourceContentError,
  sourceReadError,
} from './upload-source.js';

/** What errors and logs call the pre-signed URL: never the URL itself. */
export const UPLOAD_ROUTE = '{fileUploadUrl}';

export interface FileTransferDeps {
  /** Plain TLS agent (no client certificate) for the files host. */
  dispatcher: Dispatcher;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  sleep?: Sleep;
  /** Creates a download's temp file (default: open with `wx`); tests inject ENOSPC or EIO here. */
  openTemp?: (path: string) => Promise<TempFile>;
  /** Told of each upload attempt (metrics). */
  observer?: ApiObserver;
}

/** The part of a FileHandle a download writes through. */
export interface TempFile {
  write(chunk: Buffer): Promise<unknown>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface UploadResult {
  md5: string;
  size: number;
}

/** Between young-generation GCs while a file streams (see core/collect.ts). */
const COLLECT_EVERY_BYTES = 16 * 1024 * 1024;

/**
 * Passes bytes through while hashing them, so nothing is held in memory. Given the SHA-256 the
 * bytes must have (the one recorded when the file was taken), it holds back the last chunk until
 * the end of the input proves them: other bytes end the stream with an error instead, so the
 * request never completes its Content-Length and the service never holds them.
 */
export class HashingStream extends Transform {
  private readonly hash = createHash('md5');
  private readonly pacer = new GarbagePacer(COLLECT_EVERY_BYTES);
  private readonly sha256: Hash | undefined;
  private withheld: Buffer | undefined;
  bytes = 0;
  /** The SHA-256 of the bytes read, once they proved other than the expected one. */
  mismatch: string | undefined;

  constructor(
    private readonly onProgress?: (bytes: number) => void,
    private readonly expectSha256?: string,
  ) {
    super();
    this.sha256 = expectSha256 === undefined ? undefined : createHash('sha256');
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.pacer.passed(chunk.length);
    this.onProgress?.(this.bytes);
    if (!this.sha256) {
      done(null, chunk);
      return;
    }
    this.sha256.update(chunk);
    const previous = this.withheld;
    this.withheld = chunk;
    done(null, previous);
  }

  override _flush(done: TransformCallback): void {
    const read = this.sha256?.digest('hex');
    if (read !== undefined && read !== this.expectSha256?.toLowerCase()) {
      this.mismatch = read;
      done(new Error('the bytes read are not the bytes hashed when the file was taken'));
      return;
    }
    if (this.withheld) this.push(this.withheld);
    done();
  }

  digestHex(): string {
    return this.hash.digest('hex');
  }
}

export interface UploadOptions {
  signal?: AbortSignal;
  contentType?: string;
  /** Bytes read from the file so far in this attempt (for progress logs of big files; not for `content`). */
  onProgress?: (bytes: number) => void;
  /** The caller's logger (with its folder, file and job fields) for this upload's lines. */
  log?: Logger;
  /**
   * The whole file, already read, and the mtime it had then: sent from memory instead of opening
   * and streaming the file again. The file is still looked at after the answer, as a streamed one.
   */
  content?: HeldContent;
  /**
   * The SHA-256 recorded when the file was taken: a streamed file whose bytes differ (rewritten
   * with the same size and mtime, or replaced) is never sent whole and fails DOCEX_SOURCE_CHANGED.
   * Held `content` is those very bytes and needs no check.
   */
  expectSha256?: string;
}

export interface HeldContent {
  bytes: Buffer;
  mtimeMs: number;
}

/** What one attempt sends: the file streamed and hashed on the way, or bytes held in memory. */
interface AttemptBody {
  body: Readable | Buffer;
  stamp: SourceStamp;
  /** Bytes handed to the request so far. */
  sent(): number;
  md5(): string;
  abandon(): void;
  readError(): NodeJS.ErrnoException | undefined;
  /** The SHA-256 of the bytes read, when it proved other than the expected one. */
  mismatch(): string | undefined;
}

async function streamedBody(
  filePath: string,
  onProgress?: (bytes: number) => void,
  expectSha256?: string,
): Promise<AttemptBody> {
  const source = await openSource(filePath);
  const hasher = new HashingStream(onProgress, expectSha256);
  // pipeline() destroys the file stream if undici abandons the body (reset, timeout).
  pipeline(source.stream, hasher, () => {});
  return {
    body: hasher,
    stamp: { size: source.size, mtimeMs: source.mtimeMs },
    sent: () => hasher.bytes,
    md5: () => hasher.digestHex(),
    abandon: () => hasher.destroy(),
    readError: source.readError,
    mismatch: () => hasher.mismatch,
  };
}

function heldBody(content: HeldContent): AttemptBody {
  return {
    body: content.bytes,
    stamp: { size: content.bytes.length, mtimeMs: content.mtimeMs },
    sent: () => content.bytes.length,
    md5: () => createHash('md5').update(content.bytes).digest('hex'),
    abandon: () => {},
    readError: () => undefined,
    mismatch: () => undefined,
  };
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
 * and checks the ETag. A retry re-opens the file from the start. Local trouble is not network
 * trouble: an unreadable file is DOCEX_SOURCE_READ, a file that changes during the upload is
 * DOCEX_SOURCE_CHANGED, and neither is retried.
 */
export async function uploadFile(
  deps: FileTransferDeps,
  url: string,
  filePath: string,
  options: UploadOptions = {},
): Promise<UploadResult> {
  const { clock } = deps;
  const log = options.log ?? deps.log;
  const signal = options.signal;
  let stamp: SourceStamp | undefined;
  const held = options.content;
  // Once an attempt got no answer or a 5xx, the store may hold the file: a later 409 is ambiguous.
  let mayHaveLanded = false;
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
      const source = held
        ? heldBody(held)
        : await streamedBody(filePath, options.onProgress, options.expectSha256);
      const first: SourceStamp = stamp ?? source.stamp;
      stamp = first;
      if (!isSameStamp(first, source.stamp)) {
        source.abandon();
        throw sourceChangedError(first, source.stamp, { bytes: 0, uploaded: false });
      }
      const { size } = first;
      let seconds = 0;
      const answer = await send(
        deps,
        {
          url,
          method: 'PUT',
          route: UPLOAD_ROUTE,
          log,
          headers: {
            'content-length': String(size),
            'content-type': options.contentType ?? 'application/octet-stream',
          },
          body: source.body,
          signal,
          secrets: urlSecrets(url),
          fields: { size, attempt },
          onOutcome: (status, took) => {
            seconds = took;
            notify(deps.observer, 'upload', { bytes: source.sent(), seconds: took, status });
          },
          onNoAnswer: async () => {
            source.abandon();
            const readError = source.readError();
            if (readError) throw sourceReadError(readError);
            const mismatch = source.mismatch();
            if (mismatch !== undefined) {
              throw sourceContentError(options.expectSha256 ?? '', mismatch, { bytes: source.sent() });
            }
            const now = await currentStamp(filePath);
            if (now && !isSameStamp(first, now)) {
              throw sourceChangedError(first, now, { bytes: source.sent(), uploaded: false });
            }
            mayHaveLanded = true;
          },
        },
        // The store's answer is its status and ETag: a body cut short changes neither.
        async (a) => textAnswer(a, await a.text().catch(() => '')),
      );
      const { status } = answer;
      if (status === 409 && mayHaveLanded) throw maybeDoneError(answer.error());
      if (status >= 500) mayHaveLanded = true;
      if (status === 403) throw answer.error(API_ERROR_CODES.uploadExpired);
      if (status < 200 || status > 299) throw answer.error();
      const md5 = source.sent() === size ? source.md5() : `incomplete-${source.sent()}`;
      const now = await currentStamp(filePath);
      if (now && !isSameStamp(first, now)) {
        throw sourceChangedError(first, now, { bytes: source.sent(), uploaded: true, md5 });
      }
      const etag = normaliseEtag(answer.headers['etag']);
      if (etag !== md5) {
        throw new ApiError(
          API_ERROR_CODES.etagMismatch,
          `PUT ${UPLOAD_ROUTE}: ETag ${etag ?? '(none)'} does not match the MD5 ${md5} of the ${size} bytes sent`,
          { method: 'PUT', route: UPLOAD_ROUTE, status },
        );
      }
      log.info({ size, ms: Math.round(seconds * 1000) }, 'file uploaded');
      return { md5, size };
    },
  );
}

/** A 409 (already uploaded) to a retry: the attempt that seemed lost may have stored the file. */
function maybeDoneError(err: ApiError): ApiError {
  return new ApiError(
    API_ERROR_CODES.uploadMaybeDone,
    `PUT ${UPLOAD_ROUTE} answered 409 after a retried attempt: the file may be stored; check the job with GET /jobs/{id}`,
    {
      status: 409,
      method: 'PUT',
      route: UPLOAD_ROUTE,
      ...(err.problem ? { problem: err.problem } : {}),
      ...(err.text === undefined ? {} : { text: err.text }),
    },
  );
}
