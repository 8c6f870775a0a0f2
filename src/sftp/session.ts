/**
 * One SSH connection with one SFTP channel, on the `ssh2` Client directly (not ssh2-sftp-client):
 * we need the raw key for pinning, pipelined READ requests for speed, directory handles for big
 * listings and our own serialisation and reconnect, which that wrapper would only get in the way of.
 */

import { readFile } from 'node:fs/promises';
import type { Client, FileEntryWithStats, ServerHostKeyAlgorithm, SFTPWrapper, Stats } from 'ssh2';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { SFTP_STATUS, sftpOpError } from './errors.js';
import { checkHostKey, type HostKeyVerdict, knownHostKeyAlgorithms } from './host-key.js';
import type { RemoteEntry, SftpEndpoint } from './types.js';

// ssh2's own preference with the AEAD ciphers first: they need no separate MAC pass.
const CIPHERS = [
  'aes128-gcm@openssh.com',
  'chacha20-poly1305@openssh.com',
  'aes256-gcm@openssh.com',
  'aes128-ctr',
  'aes192-ctr',
  'aes256-ctr',
] as const;

/** Host key algorithms ssh2 knows (it refuses to start with any other name). */
const SSH2_HOST_KEY_ALGORITHMS = new Set<string>([
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
  'ssh-dss',
]);

/**
 * With known_hosts only (no fingerprint pins): offer just the key types it lists for this host, so
 * a server with several host keys presents a listed one. Pins name no type: nothing is restricted.
 */
export function hostKeyAlgorithms(
  endpoint: SftpEndpoint,
  knownHostsText: string | undefined,
): ServerHostKeyAlgorithm[] {
  if (knownHostsText === undefined || (endpoint.hostKey.sha256?.length ?? 0) > 0) return [];
  return knownHostKeyAlgorithms(knownHostsText, endpoint.host, endpoint.port).filter(
    (a): a is ServerHostKeyAlgorithm => SSH2_HOST_KEY_ALGORITHMS.has(a),
  );
}

/** `sftp://user@host:port`: what every log line and error names the server by (no secrets). */
export function describeEndpoint(endpoint: Pick<SftpEndpoint, 'host' | 'port' | 'username'>): string {
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return `sftp://${endpoint.username}@${host}:${endpoint.port}`;
}

const S_IFMT = 0o170000;
export function entryType(mode: number): RemoteEntry['type'] {
  switch (mode & S_IFMT) {
    case 0o100000:
      return 'file';
    case 0o040000:
      return 'dir';
    case 0o120000:
      return 'symlink';
    default:
      return 'other';
  }
}

export function toEntry(name: string, attrs: { mode?: number; size?: number; mtime?: number }): RemoteEntry {
  const a = attrs;
  return { name, type: entryType(a.mode ?? 0), size: a.size ?? 0, mtimeMs: (a.mtime ?? 0) * 1000 };
}

function connectError(server: string, err: Error, verdict: HostKeyVerdict | undefined): DocexError {
  if (verdict && !verdict.ok) {
    const what =
      verdict.reason === 'unknown'
        ? 'is not pinned (unknown host key; add its fingerprint to hostKey.sha256 or the known_hosts file after checking it)'
        : verdict.reason === 'revoked'
          ? 'is revoked in the known_hosts file'
          : 'does not match the pinned key (changed host key: possible man-in-the-middle)';
    return new DocexError('DOCEX_SFTP_HOST_KEY', `host key ${verdict.fingerprint} of ${server} ${what}`, {
      cause: err,
      details: { server, fingerprint: verdict.fingerprint, reason: verdict.reason },
    });
  }
  const level = (err as { level?: string }).level;
  if (level === 'client-authentication') {
    return new DocexError('DOCEX_SFTP_AUTH', `${server} refused the login (${err.message})`, {
      cause: err,
      details: { server },
    });
  }
  return new DocexError('DOCEX_SFTP_CONNECT', `cannot connect to ${server}: ${err.message}`, {
    cause: err,
    details: { server, ...(level ? { level } : {}) },
  });
}

export class SftpSession {
  private closedFlag = false;
  private readonly closeListeners = new Set<() => void>();

  private constructor(
    private readonly client: Client,
    readonly sftp: SFTPWrapper,
    readonly description: string,
  ) {
    const onGone = () => {
      if (this.closedFlag) return;
      this.closedFlag = true;
      const listeners = [...this.closeListeners];
      this.closeListeners.clear();
      for (const listener of listeners) listener();
    };
    client.on('close', onGone);
    client.on('end', onGone);
    sftp.on('close', onGone);
    sftp.on('end', onGone);
    // After ready, errors surface through the pending operations and 'close'.
    client.on('error', () => onGone());
  }

  /** Connects, verifies the host key, logs in and opens the SFTP channel. */
  static async open(endpoint: SftpEndpoint, log: Logger): Promise<SftpSession> {
    const server = describeEndpoint(endpoint);
    const knownHostsText = endpoint.hostKey.knownHostsFile
      ? await readFile(endpoint.hostKey.knownHostsFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
          throw new DocexError(
            'DOCEX_SFTP_HOST_KEY',
            `cannot read known_hosts file ${endpoint.hostKey.knownHostsFile} (${err.code ?? 'unreadable'})`,
            { cause: err, details: { server, file: endpoint.hostKey.knownHostsFile } },
          );
        })
      : undefined;
    let verdict: HostKeyVerdict | undefined;
    const serverHostKey = hostKeyAlgorithms(endpoint, knownHostsText);
    // Loaded on first connect: an agent with no SFTP folder or target never holds ssh2 (docs/benchmarks.md).
    const { Client: SshClient } = await import('ssh2');
    const client = new SshClient();
    const sftp = await new Promise<SFTPWrapper>((resolve, reject) => {
      const fail = (err: Error) => {
        // A refused handshake can emit more errors while closing: never leave 'error' unheard.
        client.on('error', () => undefined);
        client.removeAllListeners('ready');
        client.end();
        reject(connectError(server, err, verdict));
      };
      client.once('error', fail);
      client.once('close', () => fail(new Error('connection closed before it was ready')));
      client.once('ready', () => {
        client.sftp((err, channel) => {
          client.removeListener('error', fail);
          client.removeAllListeners('close');
          if (err) {
            client.end();
            reject(
              new DocexError('DOCEX_SFTP_CONNECT', `${server} refused the SFTP subsystem: ${err.message}`, {
                cause: err,
                details: { server },
              }),
            );
          } else resolve(channel);
        });
      });
      client.connect({
        host: endpoint.host,
        port: endpoint.port,
        username: endpoint.username,
        ...(endpoint.password !== undefined ? { password: endpoint.password } : {}),
        ...(endpoint.privateKey !== undefined ? { privateKey: endpoint.privateKey } : {}),
        ...(endpoint.passphrase !== undefined ? { passphrase: endpoint.passphrase } : {}),
        readyTimeout: endpoint.readyTimeoutMs,
        keepaliveInterval: endpoint.keepaliveIntervalMs,
        keepaliveCountMax: 3,
        algorithms: { cipher: [...CIPHERS], ...(serverHostKey.length > 0 ? { serverHostKey } : {}) },
        hostVerifier: (key: Buffer) => {
          verdict = checkHostKey(
            { sha256: endpoint.hostKey.sha256, knownHostsText, host: endpoint.host, port: endpoint.port },
            key,
          );
          return verdict.ok;
        },
      });
      // SFTP is request/answer: without TCP_NODELAY a small request can wait for the peer's
      // delayed ACK (40 ms on Linux) behind Nagle's algorithm.
      client.setNoDelay(true);
    });
    log.debug({ server, fingerprint: verdict?.fingerprint }, 'sftp connected');
    return new SftpSession(client, sftp, server);
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  onClose(listener: () => void): () => void {
    if (this.closedFlag) listener();
    else this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /**
   * One SFTP request. ssh2 never answers a request sent on a closed channel, so a request fails at
   * once when the session is gone, and a pending one fails when it goes (no hang).
   */
  request<T>(run: (done: (err: Error | null | undefined, value: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const state = (this.sftp as unknown as { outgoing?: { state?: string } }).outgoing?.state;
      if (this.closedFlag || (state !== undefined && state !== 'open')) {
        reject(new Error('connection lost'));
        return;
      }
      const off = this.onClose(() => reject(new Error('connection lost')));
      try {
        run((err, value) => {
          off();
          if (err) reject(err);
          else resolve(value);
        });
      } catch (err) {
        off();
        reject(err);
      }
    });
  }

  /** Whether the server offers OpenSSH's atomic, overwriting rename. */
  get hasPosixRename(): boolean {
    const extensions = (this.sftp as unknown as { _extensions?: Record<string, string> })._extensions;
    return extensions?.['posix-rename@openssh.com'] === '1';
  }

  /** Reads a directory through a handle batch by batch, keeping only the fields we use. */
  async list(dir: string): Promise<RemoteEntry[]> {
    try {
      const handle = await this.request<Buffer>((done) => this.sftp.opendir(dir, done));
      const entries: RemoteEntry[] = [];
      try {
        for (;;) {
          const batch = await this.request<FileEntryWithStats[] | false>((done) => {
            this.sftp.readdir(handle, (err, list) => {
              if (err && (err as { code?: number }).code === SFTP_STATUS.EOF) done(undefined, false);
              else done(err, list);
            });
          });
          if (batch === false) break;
          for (const item of batch) {
            if (item.filename !== '.' && item.filename !== '..')
              entries.push(toEntry(item.filename, item.attrs));
          }
        }
      } finally {
        await this.closeHandle(handle);
      }
      return entries;
    } catch (err) {
      throw sftpOpError('list', dir, this.description, err);
    }
  }

  async stat(path: string): Promise<RemoteEntry | undefined> {
    try {
      const attrs = await this.request<Stats>((done) => this.sftp.lstat(path, done));
      return toEntry(path.slice(path.lastIndexOf('/') + 1), attrs);
    } catch (err) {
      if ((err as { code?: number }).code === SFTP_STATUS.NO_SUCH_FILE) return undefined;
      throw sftpOpError('stat', path, this.description, err);
    }
  }

  /**
   * Closes a remote handle; never hangs on a dead connection (ssh2 would queue the request and
   * never answer it), and never fails: a handle of a lost session is gone anyway.
   */
  closeHandle(handle: Buffer): Promise<void> {
    if (this.closedFlag) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.onClose(resolve);
      try {
        this.sftp.close(handle, () => resolve());
      } catch {
        resolve();
      }
    });
  }

  /** Raw calls; errors are the ssh2 errors (the server layer maps them). */
  rawRename(from: string, to: string): Promise<void> {
    return this.request<void>((done) => this.sftp.rename(from, to, done));
  }

  rawPosixRename(from: string, to: string): Promise<void> {
    return this.request<void>((done) => this.sftp.ext_openssh_rename(from, to, done));
  }

  rawMkdir(dir: string): Promise<void> {
    return this.request<void>((done) => this.sftp.mkdir(dir, done));
  }

  rawUnlink(path: string): Promise<void> {
    return this.request<void>((done) => this.sftp.unlink(path, done));
  }

  rawRmdir(path: string): Promise<void> {
    return this.request<void>((done) => this.sftp.rmdir(path, done));
  }

  /** Ends the connection; resolves once it is closed. */
  async close(): Promise<void> {
    if (this.closedFlag) return;
    const closed = new Promise<void>((resolve) => this.onClose(resolve));
    this.client.end();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    if (!this.closedFlag) this.client.destroy();
  }

  /** Drops the connection at once (an aborted transfer). */
  destroy(): void {
    this.client.destroy();
  }
}
