/**
 * Fast, checked download of one remote file.
 *
 * Where the time goes with a plain streamed `get` (ssh2's createReadStream): it keeps one 64 KiB
 * READ in flight, so every chunk waits a full request/response turn through both SSH stacks
 * (figures: docs/benchmarks.md). OpenSSH's sftp keeps 64 requests in flight. We do the same: many
 * READ requests outstanding (ssh2 writes each answer straight into our buffer); a request slot is free
 * again as soon as its answer is in, while the positional write to the local file runs beside it
 * (any order, reused buffers). ssh2's 2 MiB channel window (topped up only below 1 MiB) stalls the
 * server whenever this process is not scheduled for a moment, so the window is kept wider. A large
 * file is split into ranges fetched over several pool connections at once, which also spreads the
 * server's crypto over more processes.
 *
 * The local file is `<target>.<random>.part` (beside the target or in the caller's temp folder)
 * until its size is checked against the listing, it is stamped with the caller's mtime, fsynced
 * and renamed; a failed or aborted download removes it. Reading stops at expectedSize
 * and one more READ checks that the file ends there, so a file that grew or shrank since the
 * listing is a DOCEX_SFTP_SIZE_MISMATCH, never a silent truncation.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { sftpOpError } from './errors.js';
import type { SftpSession } from './session.js';

export interface DownloadTuning {
  /** Bytes per READ request (servers cap it; OpenSSH allows 255 KiB). */
  requestSize: number;
  /** READ requests in flight per connection. */
  outstanding: number;
  /** Files at least this large are split over the free transfer connections. */
  splitAbove: number;
  /** SSH channel window kept open for the server (0: ssh2's 2 MiB). */
  windowBytes: number;
  /** A flush to disk starts in the background after this many bytes written (0: only the final fsync). */
  flushBehindBytes: number;
}

// 255 KiB is OpenSSH's largest READ; 16 of them keep 4 MiB in flight per connection, and the
// window lets the server send all of it (what is in flight stays bounded by the requests).
export const DEFAULT_TUNING: DownloadTuning = {
  requestSize: 261_120,
  outstanding: 16,
  splitAbove: 32 * 1024 * 1024,
  windowBytes: 16 * 1024 * 1024,
  flushBehindBytes: 16 * 1024 * 1024,
};

/** The request size the server accepts (ssh2 learns it from limits@openssh.com), same bytes in flight. */
export function effectiveTuning(tuning: DownloadTuning, maxReadLen: number | undefined): DownloadTuning {
  const requestSize = Math.max(1024, Math.min(tuning.requestSize, maxReadLen ?? 32_768));
  const outstanding = Math.min(256, Math.ceil((tuning.requestSize * tuning.outstanding) / requestSize));
  return { ...tuning, requestSize, outstanding };
}

export function partName(localPath: string, tempDir?: string): string {
  const part = `${localPath}.${randomBytes(4).toString('hex')}.part`;
  return tempDir === undefined ? part : path.join(tempDir, path.basename(part));
}

function abortError(signal: AbortSignal, remotePath: string): DocexError {
  // AbortSignal.any() gives the reason of the signal that fired.
  const reason = signal.reason;
  if (reason instanceof DocexError) return reason;
  return new DocexError('DOCEX_STOPPING', `download of ${remotePath} aborted`, { details: { remotePath } });
}

interface RangeJob {
  session: SftpSession;
  remotePath: string;
  out: fs.FileHandle;
  start: number;
  end: number;
  tuning: DownloadTuning;
  signal: AbortSignal | undefined;
  /** The range ends where the listing says the file ends: check that no byte follows. */
  probeEnd: boolean;
  /** The caller's signal: once it fired, the connection is dropped, not closed politely. */
  external: AbortSignal | undefined;
  flush: FlushBehind;
}

/**
 * Starts an fdatasync every `every` bytes written, one at a time, so the disk writes while the
 * network still delivers: the final fsync has only the tail left (figures: docs/benchmarks.md).
 * An error of a background flush fails the download at its end.
 */
class FlushBehind {
  private unflushed = 0;
  private running: Promise<void> | undefined;
  private error: unknown;

  constructor(
    private readonly out: fs.FileHandle,
    private readonly every: number,
  ) {}

  wrote(bytes: number): void {
    this.unflushed += bytes;
    if (this.every <= 0 || this.unflushed < this.every || this.running) return;
    this.unflushed = 0;
    this.running = this.out
      .datasync()
      .catch((err: unknown) => {
        this.error ??= err;
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  async settle(): Promise<void> {
    await this.running;
    if (this.error !== undefined) throw this.error;
  }
}

/** Fetches [start, end) with many READs in flight; resolves with the bytes written. */
async function fetchRange(job: RangeJob): Promise<number> {
  const { session, remotePath, out, end, signal } = job;
  const sftp = session.sftp;
  // ssh2 splits a READ larger than the server's limit into sequential ones: stay within it.
  const tuning = effectiveTuning(job.tuning, (sftp as unknown as { _maxReadLen?: number })._maxReadLen);
  const handle = await session.request<Buffer>((done) => sftp.open(remotePath, 'r', done));
  let written = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      let next = job.start;
      let inFlight = 0;
      let writing = 0;
      let failed = false;
      const fail = (err: unknown) => {
        if (failed) return;
        failed = true;
        signal?.removeEventListener('abort', onAbort);
        reject(err);
      };
      const onAbort = () => fail(abortError(signal as AbortSignal, remotePath));
      signal?.addEventListener('abort', onAbort, { once: true });
      // A read slot is free again as soon as its answer is in, not when the disk took it: the
      // writes run beside the reads, in reused buffers (twice the read slots at most).
      const spare: Buffer[] = [];
      let buffers = 0;
      const takeBuffer = (): Buffer | undefined => {
        const buf = spare.pop();
        if (buf) return buf;
        if (buffers >= tuning.outstanding * 2) return undefined;
        buffers++;
        return Buffer.allocUnsafe(tuning.requestSize);
      };
      const write = (buf: Buffer, nb: number, position: number) => {
        writing++;
        // The writes may finish in any order: positions are absolute.
        out.write(buf, 0, nb, position).then(() => {
          written += nb;
          writing--;
          job.flush.wrote(nb);
          spare.push(buf);
          pump();
        }, fail);
      };
      const request = (buf: Buffer, position: number, length: number) => {
        inFlight++;
        session
          .request<number>((done) => sftp.read(handle, buf, 0, length, position, (err, nb) => done(err, nb)))
          .then((nb) => {
            if (failed) return;
            inFlight--;
            if (nb === 0) return fail(shortFile(remotePath, position, end));
            if (tuning.windowBytes > 0) widenWindow(sftp, tuning.windowBytes);
            write(buf, nb, position);
            if (nb < length) {
              // A short answer: ask for the rest at once (a fresh buffer; the answer's is being written).
              const rest = takeBuffer() ?? Buffer.allocUnsafe(tuning.requestSize);
              request(rest, position + nb, length - nb);
            }
            pump();
          })
          .catch(fail);
      };
      const pump = () => {
        if (failed) return;
        while (inFlight < tuning.outstanding && next < end) {
          const buf = takeBuffer();
          if (!buf) break;
          const length = Math.min(tuning.requestSize, end - next);
          request(buf, next, length);
          next += length;
        }
        if (inFlight === 0 && writing === 0 && next >= end) {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }
      };
      if (signal?.aborted) return onAbort();
      pump();
    });
    if (job.probeEnd) {
      const nb = await session.request<number>((done) =>
        sftp.read(handle, Buffer.alloc(1), 0, 1, end, (err, n) => done(err, n)),
      );
      if (nb > 0) {
        throw new DocexError(
          'DOCEX_SFTP_SIZE_MISMATCH',
          `${remotePath} is larger than the ${end} bytes the listing said: it changed since it was listed`,
          { details: { remotePath, expected: end } },
        );
      }
    }
  } finally {
    // Aborted: do not wait for a slow server to answer the READs in flight (the caller drops the connection).
    if (!job.external?.aborted) await session.closeHandle(handle);
  }
  return written;
}

interface ChannelInternals {
  incoming?: { window?: number };
  outgoing?: { id?: number; state?: string };
  _client?: { _protocol?: { channelWindowAdjust?: (id: number, amount: number) => void } };
}

/**
 * ssh2 gives the server a 2 MiB window and tops it up only below 1 MiB: when this process is not
 * scheduled for a few milliseconds the server stalls. Keep a larger window open (ssh2 internals;
 * skipped if their shape changes).
 */
export function widenWindow(sftp: unknown, target: number): void {
  const ch = sftp as ChannelInternals;
  const window = ch.incoming?.window;
  const id = ch.outgoing?.id;
  const adjust = ch._client?._protocol?.channelWindowAdjust;
  if (typeof window !== 'number' || typeof id !== 'number' || typeof adjust !== 'function') return;
  if (ch.outgoing?.state !== 'open' || window >= target / 2 || !ch.incoming) return;
  adjust.call(ch._client?._protocol, id, target - window);
  ch.incoming.window = target;
}

function shortFile(remotePath: string, at: number, expected: number): DocexError {
  return new DocexError(
    'DOCEX_SFTP_SIZE_MISMATCH',
    `${remotePath} ended at ${at} bytes, the listing said ${expected}: it changed since it was listed`,
    { details: { remotePath, received: at, expected } },
  );
}

export interface DownloadJob {
  sessions: readonly SftpSession[];
  remotePath: string;
  localPath: string;
  expectedSize: number;
  tuning: DownloadTuning;
  signal?: AbortSignal | undefined;
  server: string;
  /** Folder of the `.part` file (same file system as localPath); default: beside localPath. */
  tempDir?: string | undefined;
  /** Stamped on the file before the rename (ms). */
  mtimeMs?: number | undefined;
}

/** Splits [0, size) over the sessions (ranges aligned to the request size). */
export function splitRanges(size: number, parts: number, align: number): Array<[number, number]> {
  const per = Math.max(align, Math.ceil(size / parts / align) * align);
  const ranges: Array<[number, number]> = [];
  for (let start = 0; start < size; start += per) ranges.push([start, Math.min(size, start + per)]);
  return ranges.length > 0 ? ranges : [[0, 0]];
}

/** Downloads into a .part file, checks the size, fsyncs and renames it to localPath. */
export async function downloadFile(job: DownloadJob): Promise<number> {
  const { remotePath, localPath, expectedSize, tuning, signal, server } = job;
  if (signal?.aborted) throw abortError(signal, remotePath);
  const part = partName(localPath, job.tempDir);
  const out = await fs.open(part, 'wx', 0o600);
  let closed = false;
  try {
    const ranges = splitRanges(expectedSize, job.sessions.length, tuning.requestSize);
    // The first failing range stops the others, and all settle before the connections are given
    // back: a pool connection never carries the reads of a finished download.
    const stop = new AbortController();
    const rangeSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    const flush = new FlushBehind(out, tuning.flushBehindBytes);
    let firstError: unknown;
    const settled = await Promise.allSettled(
      ranges.map(([start, end], i) =>
        fetchRange({
          session: job.sessions[i] as SftpSession,
          remotePath,
          out,
          start,
          end,
          tuning,
          signal: rangeSignal,
          external: signal,
          probeEnd: i === ranges.length - 1,
          flush,
        }).catch((err: unknown) => {
          if (firstError === undefined) {
            firstError = err;
            stop.abort();
          }
          throw err;
        }),
      ),
    );
    await flush.settle().catch((err: unknown) => {
      firstError ??= err;
    });
    if (firstError !== undefined) throw sftpOpError('download', remotePath, server, firstError);
    const bytes = settled.map((r) => (r.status === 'fulfilled' ? r.value : 0));
    const received = bytes.reduce((a, b) => a + b, 0);
    if (received !== expectedSize) throw shortFile(remotePath, received, expectedSize);
    const { size } = await out.stat();
    if (size !== expectedSize) throw shortFile(remotePath, size, expectedSize);
    if (job.mtimeMs !== undefined) {
      const seconds = job.mtimeMs / 1000;
      await out.utimes(seconds, seconds);
    }
    await out.sync();
    await out.close();
    closed = true;
    await fs.rename(part, localPath);
    return received;
  } catch (err) {
    if (!closed) await out.close().catch(() => undefined);
    await fs.rm(part, { force: true });
    throw err;
  }
}
