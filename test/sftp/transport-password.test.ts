/**
 * Password login (the test sshd only takes keys; root's password is unknown), against the ssh2
 * fault server: the right password logs in, a wrong one is DOCEX_SFTP_AUTH, neither is logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSftpServer } from '../../src/sftp/server.js';
import type { SftpEndpoint } from '../../src/sftp/types.js';
import { caughtDocex } from '../api/support/caught.js';
import { captureLogger } from '../api/support/log-capture.js';
import { type FaultServer, startFaultServer } from '../sources/sftp/support/fault-server.js';

describe('SFTP password login (ssh2 server)', () => {
  let server: FaultServer;
  beforeAll(async () => {
    server = await startFaultServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const endpoint = (password: string): SftpEndpoint => ({
    host: server.host,
    port: server.port,
    username: server.username,
    password,
    hostKey: { sha256: [server.fingerprint] },
    keepaliveIntervalMs: 10_000,
    readyTimeoutMs: 10_000,
  });

  it('logs in with the right password and lists', async () => {
    const capture = captureLogger();
    const sftp = openSftpServer(endpoint(server.password), { log: capture.log });
    try {
      expect(await sftp.list('/')).toBeInstanceOf(Array);
    } finally {
      await sftp.close();
    }
    expect(capture.raw()).not.toContain(server.password);
  });

  it('a wrong password is DOCEX_SFTP_AUTH; the password is in no log line or error', async () => {
    const capture = captureLogger();
    const sftp = openSftpServer(endpoint('wrong-pass-7781'), { log: capture.log });
    try {
      const err = await caughtDocex(sftp.list('/'));
      expect(err.code).toBe('DOCEX_SFTP_AUTH');
      expect(JSON.stringify(err.toJSON())).not.toContain('wrong-pass-7781');
      expect(err.message).toContain(`sftp://${server.username}@127.0.0.1:${server.port}`);
    } finally {
      await sftp.close();
    }
    expect(capture.raw()).toContain('DOCEX_SFTP_AUTH');
    expect(capture.raw()).not.toContain('wrong-pass-7781');
  });
});
