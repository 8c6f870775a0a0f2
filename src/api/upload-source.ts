import { open, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DocexError } from '../core/errors.js';
import { API_ERROR_CODES } from './errors.js';

/** What the first upload attempt saw of the file; later looks compare against it. */
export interface SourceStamp {
  size: number;
  mtimeMs: number;
}

/** The file to upload, opened: its stamp and a stream of at most `size` bytes. */
export interface UploadSource extends SourceStamp {
  stream: Readable;
  /** The error of reading the file, once reading failed. */
  readError(): NodeJS.ErrnoException | undefined;
}

function errnoDetails(err: unknown): Record<string, unknown> {
  const e = err as NodeJS.ErrnoException | undefined;
  return {
    ...(typeof e?.code === 'string' ? { errno: e.code } : {}),
    ...(typeof e?.syscall === 'string' ? { syscall: e.syscall } : {}),
  };
}

export function sourceReadError(err: unknown): DocexError {
  const details = errnoDetails(err);
  return new DocexError(
    API_ERROR_CODES.sourceRead,
    `the file to upload could not be read (${String(details['errno'] ?? 'unknown')})`,
    { cause: err, details },
  );
}

/** `uploaded`: the service answered 2xx, so it holds the bytes read (see details). */
export function sourceChangedError(
  stamp: SourceStamp,
  now: SourceStamp,
  sent: { bytes: number; uploaded: boolean; md5?: string },
): DocexError {
  return new DocexError(
    API_ERROR_CODES.sourceChanged,
    `the file changed during its upload (${stamp.size} bytes when opened, ${now.size} now)`,
    {
      details: {
        sizeAtOpen: stamp.size,
        sizeNow: now.size,
        mtimeChanged: stamp.mtimeMs !== now.mtimeMs,
        sentBytes: sent.bytes,
        uploaded: sent.uploaded,
        ...(sent.md5 === undefined ? {} : { md5: sent.md5 }),
      },
    },
  );
}

/**
 * The bytes read for the upload are not the bytes hashed when the file was taken (same size and
 * mtime do not prove the same content). The last of them was held back, so nothing was sent whole.
 */
export function sourceContentError(
  expectedSha256: string,
  readSha256: string,
  sent: { bytes: number },
): DocexError {
  return new DocexError(
    API_ERROR_CODES.sourceChanged,
    `the file's content changed after it was taken (SHA-256 ${readSha256.slice(0, 12)}… read, ${expectedSha256.slice(0, 12)}… taken); its upload was stopped before the last byte`,
    {
      details: {
        sha256AtClaim: expectedSha256,
        sha256Read: readSha256,
        readBytes: sent.bytes,
        uploaded: false,
      },
    },
  );
}

export function isSameStamp(a: SourceStamp, b: SourceStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The file's stamp now, by path (a replaced file counts as changed); undefined when it is gone. */
export async function currentStamp(filePath: string): Promise<SourceStamp | undefined> {
  try {
    const s = await stat(filePath);
    return { size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Opens the file and stats the open descriptor, so size and bytes belong to the same file. The
 * stream stops at the stat's size: bytes appended later are not sent, and the change is found
 * by the final comparison instead of as a Content-Length error.
 */
export async function openSource(filePath: string): Promise<UploadSource> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(filePath, 'r');
  } catch (err) {
    throw sourceReadError(err);
  }
  let size: number;
  let mtimeMs: number;
  try {
    ({ size, mtimeMs } = await handle.stat());
  } catch (err) {
    await handle.close().catch(() => {});
    throw sourceReadError(err);
  }
  let failure: NodeJS.ErrnoException | undefined;
  let stream: Readable;
  if (size === 0) {
    await handle.close().catch(() => {});
    stream = Readable.from([]);
  } else {
    stream = handle.createReadStream({ start: 0, end: size - 1, autoClose: true });
  }
  stream.on('error', (err: NodeJS.ErrnoException) => {
    failure = err;
  });
  return { size, mtimeMs, stream, readError: () => failure };
}
