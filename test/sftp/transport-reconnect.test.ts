/**
 * Connections that go away: the server drops sessions, restarts, or is down for a while. The
 * transport reconnects on the next operation, retries a broken download once, and backs off
 * (on the injected clock) while the server stays unreachable.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { openSftpServer, type SftpServerOptions } from '../../src/sftp/server.js';
import type { SftpServer } from '../../src/sftp/types.js';
import { caughtDocex } from '../api/support/caught.js';
import { captureLogger } from '../api/support/log-capture.js';
import { sshdEndpoint } from '../sources/sftp/support/endpoint.js';
import { describeSshd, startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';
import { waitFor } from '../support/wait-for.js';

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

describeSshd('SFTP reconnect (real sshd)', () => {
  let sshd: TestSshd;
  let local: string;
  const servers: SftpServer[] = [];

  beforeAll(async () => {
    sshd = await startSshd();
    local = mkdtempSync(path.join(os.tmpdir(), 'docex-sftp-reconnect-'));
  });
  afterAll(async () => {
    await sshd?.stop();
    rmSync(local, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  // A short keepalive: a frozen server is noticed after three unanswered ones.
  function open(options: Partial<SftpServerOptions> = {}): SftpServer {
    const server = openSftpServer(sshdEndpoint(sshd, { keepaliveIntervalMs: 250 }), {
      log: silentLogger(),
      ...options,
    });
    servers.push(server);
    return server;
  }

  it('reuses one control connection across operations', async () => {
    const capture = captureLogger();
    const server = open({ log: capture.log });
    for (let i = 0; i < 5; i++) await server.list(sshd.files);
    await server.stat(sshd.files);
    expect(capture.lines().filter((l) => l.msg === 'sftp connected')).toHaveLength(1);
  });

  it('after the server dropped every session, the next operation reconnects and succeeds', async () => {
    writeFileSync(path.join(sshd.files, 'a.txt'), 'A');
    const capture = captureLogger();
    const server = open({ log: capture.log });
    expect(await server.stat(path.join(sshd.files, 'a.txt'))).toBeDefined();
    sshd.dropSessions();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await server.list(sshd.files)).map((e) => e.name)).toContain('a.txt');
    expect(capture.lines().filter((l) => l.msg === 'sftp connected')).toHaveLength(2);
  });

  it('keepalive notices a server that stopped answering: a pending listing is repeated on a new connection', async () => {
    const capture = captureLogger();
    const server = open({ log: capture.log });
    await server.list(sshd.files);
    const release = sshd.freezeSessions();
    try {
      const started = Date.now();
      expect(await server.list(sshd.files)).toBeInstanceOf(Array);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(capture.lines().filter((l) => l.msg === 'sftp connected')).toHaveLength(2);
    } finally {
      release();
    }
  });

  it('keepalive notices a server that stopped answering: a pending rename fails with DOCEX_SFTP_CONNECT', async () => {
    writeFileSync(path.join(sshd.files, 'r.txt'), 'R');
    const server = open();
    await server.list(sshd.files);
    const release = sshd.freezeSessions();
    try {
      const err = await caughtDocex(
        server.rename(path.join(sshd.files, 'r.txt'), path.join(sshd.files, 's.txt')),
      );
      expect(err.code).toBe('DOCEX_SFTP_CONNECT');
    } finally {
      release();
    }
  });

  it('keeps working after sshd restarts', async () => {
    const server = open();
    await server.list(sshd.files);
    await sshd.restart();
    expect(await server.list(sshd.files)).toBeInstanceOf(Array);
  });

  it('a download whose connection breaks midway is retried once on a new connection and completes', async () => {
    // Small reads, two in flight: thousands of request/answer turns, each of which waited 40 ms
    // for a delayed ACK on Node 24 before the session set TCP_NODELAY (the test timed out).
    const data = randomBytes(32 * 1024 * 1024);
    writeFileSync(path.join(sshd.files, 'big.bin'), data);
    const capture = captureLogger();
    const server = open({
      log: capture.log,
      transfers: 1,
      tuning: { requestSize: 16 * 1024, outstanding: 2 },
    });
    await server.stat(sshd.files);
    const target = path.join(local, 'big.bin');
    const pending = server.download(path.join(sshd.files, 'big.bin'), target, data.length);
    // Drop the sessions only once bytes arrive: before that the transfer connection may still be
    // in its handshake, which is a connect failure, not a broken download.
    const receiving = () =>
      readdirSync(local).some((n) => n.endsWith('.part') && statSync(path.join(local, n)).size > 0);
    await waitFor(receiving);
    sshd.dropSessions();
    expect(await pending).toEqual({ bytes: data.length });
    expect(md5(readFileSync(target))).toBe(md5(data));
    expect(capture.lines().some((l) => l.msg === 'sftp download broke; retrying once')).toBe(true);
  });

  it('while the server is down: DOCEX_SFTP_CONNECT, then fail-fast backoff; after the backoff it reconnects', async () => {
    const clock = new ManualClock();
    const server = open({ clock });
    await server.list(sshd.files);
    await sshd.halt();
    try {
      const first = await caughtDocex(server.list(sshd.files));
      expect(first.code).toBe('DOCEX_SFTP_CONNECT');
      const second = await caughtDocex(server.list(sshd.files));
      expect(second.code).toBe('DOCEX_SFTP_CONNECT');
      expect(second.message).toMatch(/next attempt in 1s/);
    } finally {
      await sshd.resume();
    }
    // Still inside the backoff window: no attempt even though the server is back.
    expect((await caughtDocex(server.list(sshd.files))).message).toMatch(/next attempt in/);
    clock.advance(1_000);
    expect(await server.list(sshd.files)).toBeInstanceOf(Array);
  });

  it('backoff doubles with each failed attempt', async () => {
    const clock = new ManualClock();
    const server = open({ clock });
    await sshd.halt();
    try {
      await caughtDocex(server.list(sshd.files));
      clock.advance(1_000);
      await caughtDocex(server.list(sshd.files));
      expect((await caughtDocex(server.list(sshd.files))).message).toMatch(/next attempt in 2s/);
      clock.advance(2_000);
      await caughtDocex(server.list(sshd.files));
      expect((await caughtDocex(server.list(sshd.files))).message).toMatch(/next attempt in 4s/);
    } finally {
      await sshd.resume();
    }
  });
});
