import { createHash, randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { API_ERROR_CODES, ApiError, urlSecrets } from './errors.js';
import { send } from './http.js';
import { type AttemptListener, withRetry } from './retry-loop.js';
import type { FileTransferDeps, TempFile } from './upload.js';

export const DOWNLOAD_ROUTE = '{downloadUrl}';

export interface DownloadResult {
  size: number;
  md5: string;
}

export interface DownloadOptions {
  /** Fails with DOCEX_DOWNLOAD_SIZE_MISMATCH when the body has another length. */
  expectedSize?: number;
  signal?: AbortSignal;
  /** Told of each attempt's outcome (see CallOptions.onAttempt). */
  onAttempt?: AttemptListener;
}

/** A local step of a download failed: not the network's fault, and not worth a retry. */
function localIoError(step: string, err: unknown): DocexError {
  const e = err as NodeJS.ErrnoException | undefined;
  const errno = typeof e?.code === 'string' ? e.code : 'unknown';
  return new DocexError(API_ERROR_CODES.localIo, `download: ${step} of the local file failed (${errno})`, {
    cause: err,
    details: { step, errno },
  });
}

/** Runs one local file step, mapping its failure to DOCEX_LOCAL_IO. */
async function local<T>(step: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw localIoError(step, err);
  }
}

/**
 * Streams a pre-signed URL to `<target>.part-<random>` beside the target, fsyncs and renames:
 * a reader never sees a partial file, and a failed attempt leaves nothing behind. A failing
 * local write (ENOSPC, EIO, a removed directory) is DOCEX_LOCAL_IO, not a network error.
 */
export async function downloadFile(
  deps: FileTransferDeps,
  url: string,
  targetPath: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { clock, log } = deps;
  const signal = options.signal;
  const openTemp = deps.openTemp ?? ((p: string) => open(p, 'wx'));
  return withRetry(
    {
      policy: deps.policy,
      clock,
      log,
      method: 'GET',
      route: DOWNLOAD_ROUTE,
      retryable: true,
      ...(signal ? { signal } : {}),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    },
    async () => {
      const temp = path.join(
        path.dirname(targetPath),
        `${path.basename(targetPath)}.part-${randomBytes(6).toString('hex')}`,
      );
      let handle: TempFile | undefined;
      try {
        const got = await send(
          deps,
          { url, method: 'GET', route: DOWNLOAD_ROUTE, log, signal, secrets: urlSecrets(url) },
          async (answer) => {
            if (answer.status < 200 || answer.status > 299) {
              throw answer.error(await answer.text().catch(() => ''));
            }
            const file = await local('open', () => openTemp(temp));
            try {
              const hash = createHash('md5');
              let size = 0;
              for await (const chunk of answer.body) {
                const buf = chunk as Buffer;
                hash.update(buf);
                size += buf.length;
                await local('write', () => file.write(buf));
              }
              answer.note({ size });
              return { file, size, md5: hash.digest('hex'), status: answer.status };
            } catch (err) {
              await file.close().catch(() => {});
              throw err;
            }
          },
        );
        handle = got.file;
        const { size, md5 } = got;
        if (options.expectedSize !== undefined && size !== options.expectedSize) {
          throw new ApiError(
            API_ERROR_CODES.downloadSize,
            `GET ${DOWNLOAD_ROUTE}: got ${size} bytes, expected ${options.expectedSize}`,
            { method: 'GET', route: DOWNLOAD_ROUTE, status: got.status },
          );
        }
        const file = handle;
        await local('sync', () => file.sync());
        handle = undefined;
        await local('close', () => file.close());
        await local('rename', () => rename(temp, targetPath));
        await syncDir(path.dirname(targetPath));
        return { size, md5 };
      } catch (err) {
        await handle?.close().catch(() => {});
        await unlink(temp).catch(() => {});
        throw err;
      }
    },
  );
}
/** Makes the rename durable; some filesystems refuse to open a directory, which is fine. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort only.
  }
}
