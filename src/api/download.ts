import { createHash, randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type Dispatcher, request } from 'undici';
import { API_ERROR_CODES, ApiError, isApiError, redactUrlParts, transportError } from './errors.js';
import { answerError } from './exchange.js';
import { withRetry } from './retry-loop.js';
import type { FileTransferDeps } from './upload.js';

export const DOWNLOAD_ROUTE = '{downloadUrl}';

export interface DownloadResult {
  size: number;
  md5: string;
}

export interface DownloadOptions {
  /** Fails with DOCEX_DOWNLOAD_SIZE_MISMATCH when the body has another length. */
  expectedSize?: number;
  signal?: AbortSignal;
}

/**
 * Streams a pre-signed URL to `<target>.part-<random>` beside the target, fsyncs and renames:
 * a reader never sees a partial file, and a failed attempt leaves nothing behind.
 */
export async function downloadFile(
  deps: FileTransferDeps,
  url: string,
  targetPath: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { clock, log } = deps;
  const signal = options.signal;
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
    },
    async () => {
      const temp = path.join(
        path.dirname(targetPath),
        `${path.basename(targetPath)}.part-${randomBytes(6).toString('hex')}`,
      );
      const started = performance.now();
      let handle: Awaited<ReturnType<typeof open>> | undefined;
      try {
        let answer: Dispatcher.ResponseData;
        try {
          answer = await request(url, {
            dispatcher: deps.dispatcher,
            method: 'GET',
            ...(signal ? { signal } : {}),
          });
        } catch (err) {
          if (signal?.aborted) throw err;
          throw transportError(err, 'GET', DOWNLOAD_ROUTE);
        }
        if (answer.statusCode < 200 || answer.statusCode > 299) {
          const text = redactUrlParts(await answer.body.text().catch(() => ''), url);
          throw answerError(
            { status: answer.statusCode, headers: answer.headers, text },
            'GET',
            DOWNLOAD_ROUTE,
            clock.now(),
          );
        }
        handle = await open(temp, 'wx');
        const hash = createHash('md5');
        let size = 0;
        try {
          for await (const chunk of answer.body) {
            const buf = chunk as Buffer;
            hash.update(buf);
            size += buf.length;
            await handle.write(buf);
          }
        } catch (err) {
          if (signal?.aborted || isApiError(err)) throw err;
          throw transportError(err, 'GET', DOWNLOAD_ROUTE);
        }
        if (options.expectedSize !== undefined && size !== options.expectedSize) {
          throw new ApiError(
            API_ERROR_CODES.downloadSize,
            `GET ${DOWNLOAD_ROUTE}: got ${size} bytes, expected ${options.expectedSize}`,
            { method: 'GET', route: DOWNLOAD_ROUTE, status: answer.statusCode },
          );
        }
        await handle.sync();
        await handle.close();
        handle = undefined;
        await rename(temp, targetPath);
        await syncDir(path.dirname(targetPath));
        const md5 = hash.digest('hex');
        log.debug(
          {
            method: 'GET',
            route: DOWNLOAD_ROUTE,
            status: answer.statusCode,
            size,
            ms: Math.round(performance.now() - started),
          },
          'api request',
        );
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
