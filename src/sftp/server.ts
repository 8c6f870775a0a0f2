/**
 * One SFTP server as the agent sees it: a control connection for listings, stats, renames, mkdir
 * and removes (one request at a time: operations are chained), and a small pool of transfer
 * connections, each carrying one download or upload at a time. Connections open on first use,
 * are reused, and reopen (with backoff) after the server dropped them.
 */
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError, isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { Connector, type OpenSession } from './connector.js';
import { DEFAULT_TUNING, type DownloadTuning, downloadFile } from './download.js';
import { SFTP_STATUS, sftpOpError, sftpStatus } from './errors.js';
import { TransferPool } from './pool.js';
import { mkdirp, renameNoReplace, uploadAtomicOn } from './remote-ops.js';
import { describeEndpoint, type SftpSession } from './session.js';
import type {
  DownloadOptions,
  DownloadResult,
  OpenSftpServerOptions,
  RemoteEntry,
  SftpEndpoint,
  SftpServer,
  UploadContent,
  UploadOptions,
} from './types.js';

export const DEFAULT_TRANSFERS = 3;

export interface SftpServerOptions extends OpenSftpServerOptions {
  /** Download request size, requests in flight, split threshold (bench and tests). */
  tuning?: Partial<DownloadTuning>;
  /** Replaces SftpSession.open (fault tests). */
  openSession?: OpenSession;
}

/** The connection dropped under the operation (as opposed to the server answering with an error). */
function connectionLost(err: unknown): boolean {
  return isDocexError(err, 'DOCEX_SFTP_CONNECT') && sftpStatus((err as DocexError).cause) === undefined;
}

class SftpServerImpl implements SftpServer {
  readonly description: string;
  private readonly control: Connector;
  private readonly pool: TransferPool;
  private readonly tuning: DownloadTuning;
  private chain: Promise<unknown> = Promise.resolve();
  private closing = false;

  constructor(
    endpoint: SftpEndpoint,
    private readonly log: Logger,
    options: SftpServerOptions,
  ) {
    this.description = describeEndpoint(endpoint);
    const clock: Clock = options.clock ?? systemClock;
    const connector = () => new Connector(endpoint, log, this.description, clock, options.openSession);
    this.control = connector();
    const transfers = Math.max(1, options.transfers ?? DEFAULT_TRANSFERS);
    this.pool = new TransferPool(Array.from({ length: transfers }, connector));
    this.tuning = { ...DEFAULT_TUNING, ...options.tuning };
  }

  /**
   * Runs one operation on the control connection after the previous one finished. An operation
   * that is safe to repeat runs once more on a new connection when the old one turned out dead.
   */
  private serial<T>(run: (session: SftpSession) => Promise<T>, repeatable: boolean): Promise<T> {
    const attempt = async () => {
      const session = await this.control.get();
      try {
        return await run(session);
      } catch (err) {
        if (!repeatable || !connectionLost(err) || this.closing) throw err;
        this.control.discard();
        return run(await this.control.get());
      }
    };
    const result = this.chain.then(attempt, attempt);
    this.chain = result.catch(() => undefined);
    return result;
  }

  list(dir: string): Promise<RemoteEntry[]> {
    return this.serial((s) => s.list(dir), true);
  }

  stat(path: string): Promise<RemoteEntry | undefined> {
    return this.serial((s) => s.stat(path), true);
  }

  rename(from: string, to: string): Promise<void> {
    return this.serial((s) => renameNoReplace(s, from, to), false);
  }

  mkdirp(dir: string): Promise<void> {
    return this.serial((s) => mkdirp(s, dir), true);
  }

  remove(path: string): Promise<void> {
    return this.serial(async (s) => {
      try {
        await s.rawUnlink(path);
      } catch (err) {
        throw sftpOpError('remove', path, s.description, err);
      }
    }, false);
  }

  removeEmptyFolder(dir: string): Promise<'removed' | 'gone' | 'kept'> {
    return this.serial(async (s) => {
      try {
        await s.rawRmdir(dir);
        return 'removed';
      } catch (err) {
        // Not empty is SSH_FX_FAILURE on OpenSSH: any status is the server's answer, not a fault.
        const status = sftpStatus(err);
        if (status === SFTP_STATUS.NO_SUCH_FILE) return 'gone';
        if (status !== undefined) return 'kept';
        throw sftpOpError('rmdir', dir, s.description, err);
      }
    }, false);
  }

  async download(
    remotePath: string,
    localPath: string,
    expectedSize: number,
    signal?: AbortSignal,
    options: DownloadOptions = {},
  ): Promise<DownloadResult> {
    const started = performance.now();
    const held = [await this.pool.acquire(signal)];
    // A big file also takes the connections nobody waits for (never more than the pool has).
    while (expectedSize >= this.tuning.splitAbove) {
      const extra = this.pool.tryAcquire();
      if (!extra) break;
      held.push(extra);
    }
    try {
      for (let attempt = 1; ; attempt++) {
        const sessions = await this.sessionsFor(held);
        try {
          const bytes = await downloadFile({
            sessions,
            remotePath,
            localPath,
            expectedSize,
            tuning: this.tuning,
            signal,
            server: this.description,
            tempDir: options.tempDir,
            mtimeMs: options.mtimeMs,
          });
          const ms = Math.round(performance.now() - started);
          this.log.debug(
            { server: this.description, remotePath, bytes, ms, connections: sessions.length },
            'sftp downloaded',
          );
          return { bytes };
        } catch (err) {
          // READs may still be in flight on an aborted or broken transfer: start those connections afresh.
          if (signal?.aborted || connectionLost(err)) for (const c of held) c.discard();
          if (attempt > 1 || signal?.aborted || !connectionLost(err) || this.closing) throw err;
          this.log.warn(
            { server: this.description, remotePath, err: (err as Error).message },
            'sftp download broke; retrying once',
          );
        }
      }
    } finally {
      for (const c of held) this.pool.release(c);
    }
  }

  /** Sessions of the held connectors; the first must connect, extra ones that fail are left out. */
  private async sessionsFor(held: Connector[]): Promise<SftpSession[]> {
    const [first, ...extra] = held as [Connector, ...Connector[]];
    const sessions = [await first.get()];
    const others = await Promise.allSettled(extra.map((c) => c.get()));
    for (const other of others) if (other.status === 'fulfilled') sessions.push(other.value);
    return sessions;
  }

  async uploadAtomic(content: UploadContent, remotePath: string, options?: UploadOptions): Promise<void> {
    const connector = await this.pool.acquire();
    try {
      for (let attempt = 1; ; attempt++) {
        const session = await connector.get();
        try {
          await uploadAtomicOn(session, content, remotePath, options);
          this.log.debug({ server: this.description, remotePath }, 'sftp uploaded');
          return;
        } catch (err) {
          if (!connectionLost(err)) throw err;
          connector.discard();
          // A stream given as a factory can be opened again; the upload is idempotent (rename over).
          if (attempt > 1 || this.closing) throw err;
        }
      }
    } finally {
      this.pool.release(connector);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.chain;
    await Promise.all([this.control.close(), this.pool.close()]);
  }
}

/** Opens nothing yet: the first operation connects (and verifies the host key). */
export function openSftpServer(endpoint: SftpEndpoint, options: SftpServerOptions): SftpServer {
  if (!endpoint.password && !endpoint.privateKey) {
    throw new DocexError(
      'DOCEX_SFTP_AUTH',
      `${describeEndpoint(endpoint)}: no password or private key given`,
    );
  }
  return new SftpServerImpl(endpoint, options.log, options);
}
