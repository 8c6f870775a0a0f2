/**
 * Keeps one SSH connection alive on demand: reused while open, reopened when it closed, with
 * exponential backoff after failed attempts (on the injected clock) so a down server is not
 * hammered. A call during the backoff fails at once with the last error.
 */
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { SftpSession } from './session.js';
import type { SftpEndpoint } from './types.js';

export const BACKOFF_START_MS = 1_000;
export const BACKOFF_MAX_MS = 60_000;

export type OpenSession = (endpoint: SftpEndpoint, log: Logger) => Promise<SftpSession>;

export class Connector {
  private session: SftpSession | undefined;
  private connecting: Promise<SftpSession> | undefined;
  private failures = 0;
  private retryAt = 0;
  private lastError: DocexError | undefined;
  private closed = false;

  constructor(
    private readonly endpoint: SftpEndpoint,
    private readonly log: Logger,
    private readonly server: string,
    private readonly clock: Clock = systemClock,
    private readonly openSession: OpenSession = SftpSession.open,
  ) {}

  /** The open session, if any, without connecting. */
  get current(): SftpSession | undefined {
    return this.session && !this.session.closed ? this.session : undefined;
  }

  async get(): Promise<SftpSession> {
    if (this.closed)
      throw new DocexError('DOCEX_SFTP_CONNECT', `${this.server}: connection closed by the agent`);
    const live = this.current;
    if (live) return live;
    if (this.connecting) return this.connecting;
    const now = this.clock.now();
    if (this.lastError && now < this.retryAt) {
      const waitS = Math.ceil((this.retryAt - now) / 1000);
      // Same code as the failure itself (a host key or login problem stays one), not hammered again.
      throw new DocexError(this.lastError.code, `${this.lastError.message} (next attempt in ${waitS}s)`, {
        cause: this.lastError,
        details: { ...this.lastError.details, server: this.server, retryInMs: this.retryAt - now },
      });
    }
    this.connecting = this.connect();
    try {
      return await this.connecting;
    } finally {
      this.connecting = undefined;
    }
  }

  private async connect(): Promise<SftpSession> {
    try {
      const session = await this.openSession(this.endpoint, this.log);
      if (this.closed) {
        await session.close();
        throw new DocexError('DOCEX_SFTP_CONNECT', `${this.server}: connection closed by the agent`);
      }
      if (this.failures > 0)
        this.log.info({ server: this.server, attempts: this.failures + 1 }, 'sftp reconnected');
      this.failures = 0;
      this.lastError = undefined;
      this.session = session;
      session.onClose(() => {
        if (this.session === session) this.session = undefined;
      });
      return session;
    } catch (err) {
      const error =
        err instanceof DocexError
          ? err
          : new DocexError('DOCEX_SFTP_CONNECT', `cannot connect to ${this.server}`, { cause: err });
      this.failures++;
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** (this.failures - 1));
      this.retryAt = this.clock.now() + delay;
      this.lastError = error;
      this.log.warn(
        { server: this.server, code: error.code, err: error.message, retryInMs: delay },
        'sftp connection failed',
      );
      throw error;
    }
  }

  /** Drops the current connection (after a broken or aborted transfer); the next get() reconnects. */
  discard(): void {
    const session = this.session;
    this.session = undefined;
    session?.destroy();
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = this.connecting?.catch(() => undefined);
    await pending;
    const session = this.session;
    this.session = undefined;
    await session?.close();
  }
}
