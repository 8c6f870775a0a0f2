/**
 * Host key pinning: the pure known_hosts/fingerprint rules, then the real sshd refusing to talk
 * to a key that is not pinned. Never trust on first use.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { endpointFromConfig } from '../../src/sftp/endpoint.js';
import {
  checkHostKey,
  checkKnownHosts,
  hostPatternsMatch,
  keyFingerprint,
  knownHostsName,
} from '../../src/sftp/host-key.js';
import { openSftpServer } from '../../src/sftp/server.js';
import type { SftpEndpoint } from '../../src/sftp/types.js';
import { caughtDocex } from '../api/support/caught.js';
import { captureLogger } from '../api/support/log-capture.js';
import { sshdEndpoint } from '../sources/sftp/support/endpoint.js';
import { describeSshd, generateKey, startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'docex-hostkey-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function publicKey(name: string): { line: string; blob: Buffer } {
  const line = readFileSync(`${generateKey(tmp, name)}.pub`, 'utf8').trim();
  return { line, blob: Buffer.from(line.split(' ')[1] ?? '', 'base64') };
}

describeSshd('host key rules (ssh-keygen makes the keys)', () => {
  let a: { line: string; blob: Buffer };
  let b: { line: string; blob: Buffer };
  beforeAll(() => {
    a = publicKey('a');
    b = publicKey('b');
  });
  const keyPart = (line: string) => line.split(' ').slice(0, 2).join(' ');

  it('fingerprints a key exactly as ssh-keygen -l does', () => {
    const printed = execFileSync(
      '/usr/bin/ssh-keygen',
      ['-l', '-E', 'sha256', '-f', path.join(tmp, 'a.pub')],
      {
        encoding: 'utf8',
      },
    ).split(' ')[1];
    expect(keyFingerprint(a.blob)).toBe(printed);
  });

  it('names a host on port 22 plainly and on other ports as [host]:port', () => {
    expect(knownHostsName('sftp.example.com', 22)).toBe('sftp.example.com');
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('matches host patterns: lists, wildcards, and a negation that wins', () => {
    expect(hostPatternsMatch('a.example.com,b.example.com', 'b.example.com')).toBe(true);
    expect(hostPatternsMatch('*.example.com', 'sftp.example.com')).toBe(true);
    expect(hostPatternsMatch('*.example.com,!bad.example.com', 'bad.example.com')).toBe(false);
    expect(hostPatternsMatch('[127.0.0.1]:2222', '[127.0.0.1]:2223')).toBe(false);
  });

  it('known_hosts: the right key is accepted, another key for the host is "changed", no entry is "unknown"', () => {
    const text = `# comment\n[127.0.0.1]:2222 ${keyPart(a.line)}\nother.host ${keyPart(b.line)}\n`;
    expect(checkKnownHosts(text, '127.0.0.1', 2222, a.blob)).toMatchObject({ ok: true });
    expect(checkKnownHosts(text, '127.0.0.1', 2222, b.blob)).toMatchObject({ ok: false, reason: 'changed' });
    expect(checkKnownHosts(text, '127.0.0.1', 22, a.blob)).toMatchObject({ ok: false, reason: 'unknown' });
  });

  it('known_hosts: hashed entries written by ssh-keygen -H are matched', () => {
    const file = path.join(tmp, 'known_hosts_hashed');
    writeFileSync(file, `[127.0.0.1]:2222 ${keyPart(a.line)}\n`);
    execFileSync('/usr/bin/ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('|1|')).toBe(true);
    expect(checkKnownHosts(text, '127.0.0.1', 2222, a.blob)).toMatchObject({ ok: true });
    expect(checkKnownHosts(text, '127.0.0.1', 2222, b.blob)).toMatchObject({ ok: false, reason: 'changed' });
  });

  it('known_hosts: a @revoked key is refused even when also listed as good', () => {
    const text = `127.0.0.1 ${keyPart(a.line)}\n@revoked * ${keyPart(a.line)}\n`;
    expect(checkKnownHosts(text, '127.0.0.1', 22, a.blob)).toMatchObject({ ok: false, reason: 'revoked' });
  });

  it('pins: any listed fingerprint accepts (rotation), with or without base64 padding; others are "changed"', () => {
    const input = { sha256: [keyFingerprint(b.blob), `${keyFingerprint(a.blob)}=`], host: 'h', port: 22 };
    expect(checkHostKey(input, a.blob)).toMatchObject({ ok: true });
    const other = publicKey('c');
    expect(checkHostKey(input, other.blob)).toEqual({
      ok: false,
      reason: 'changed',
      fingerprint: keyFingerprint(other.blob),
    });
  });
});

describeSshd('host key pinning against a real sshd', () => {
  let sshd: TestSshd;
  beforeAll(async () => {
    sshd = await startSshd();
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  async function connect(endpoint: SftpEndpoint) {
    const capture = captureLogger();
    const server = openSftpServer(endpoint, { log: capture.log });
    try {
      return {
        result: await server.list(sshd.files).then(
          () => 'ok' as const,
          (e: unknown) => e,
        ),
        capture,
      };
    } finally {
      await server.close();
    }
  }

  it('connects when the pinned fingerprint matches', async () => {
    expect((await connect(sshdEndpoint(sshd))).result).toBe('ok');
  });

  it('connects with a known_hosts file that lists the server as [127.0.0.1]:port', async () => {
    const endpoint = sshdEndpoint(sshd, { hostKey: { knownHostsFile: sshd.knownHostsFile } });
    expect((await connect(endpoint)).result).toBe('ok');
  });

  it('a changed key is refused with DOCEX_SFTP_HOST_KEY naming the fingerprint seen', async () => {
    const wrong = keyFingerprint(publicKey('not-the-server').blob);
    const { result } = await connect(sshdEndpoint(sshd, { hostKey: { sha256: [wrong] } }));
    const err = await caughtDocex(Promise.reject(result));
    expect(err.code).toBe('DOCEX_SFTP_HOST_KEY');
    expect(err.message).toContain(sshd.hostKeySha256);
    expect(err.message).toContain('changed');
    expect(err.details).toMatchObject({ fingerprint: sshd.hostKeySha256, reason: 'changed' });
  });

  it('while backing off after a refused host key, calls fail at once with the same code, naming the wait', async () => {
    const wrong = keyFingerprint(publicKey('still-not-the-server').blob);
    const server = openSftpServer(sshdEndpoint(sshd, { hostKey: { sha256: [wrong] } }), {
      log: captureLogger().log,
    });
    try {
      expect((await caughtDocex(server.list(sshd.files))).code).toBe('DOCEX_SFTP_HOST_KEY');
      const again = await caughtDocex(server.list(sshd.files));
      expect(again.code).toBe('DOCEX_SFTP_HOST_KEY');
      expect(again.message).toMatch(/next attempt in 1s/);
    } finally {
      await server.close();
    }
  });

  it('a host missing from known_hosts is refused as unknown (no trust on first use)', async () => {
    const file = path.join(tmp, 'known_hosts_other');
    writeFileSync(file, `other.example.com ${readFileSync(`${generateKey(tmp, 'k1')}.pub`, 'utf8')}`);
    const { result } = await connect(sshdEndpoint(sshd, { hostKey: { knownHostsFile: file } }));
    const err = await caughtDocex(Promise.reject(result));
    expect(err.code).toBe('DOCEX_SFTP_HOST_KEY');
    expect(err.details).toMatchObject({ reason: 'unknown', fingerprint: sshd.hostKeySha256 });
  });

  it('a missing known_hosts file is DOCEX_SFTP_HOST_KEY, not a silent trust', async () => {
    const { result } = await connect(
      sshdEndpoint(sshd, { hostKey: { knownHostsFile: path.join(tmp, 'nope') } }),
    );
    expect((await caughtDocex(Promise.reject(result))).code).toBe('DOCEX_SFTP_HOST_KEY');
  });

  it('a key the server does not know is DOCEX_SFTP_AUTH, and no key material reaches the log', async () => {
    const other = readFileSync(generateKey(tmp, 'stranger'));
    const { result, capture } = await connect(
      sshdEndpoint(sshd, { privateKey: other, password: 'pw-not-logged-123' }),
    );
    expect((await caughtDocex(Promise.reject(result))).code).toBe('DOCEX_SFTP_AUTH');
    const logged = capture.raw();
    expect(logged).toContain('sftp connection failed');
    expect(logged).not.toContain('pw-not-logged-123');
    expect(logged).not.toContain('PRIVATE KEY');
    expect(logged).not.toContain(other.toString('utf8').split('\n')[1]);
  });

  it('a private key file readable by group or others is refused; chmod 600 makes it usable', async () => {
    const keyFile = path.join(tmp, 'user_key_copy');
    writeFileSync(keyFile, sshd.privateKey);
    chmodSync(keyFile, 0o644);
    const config = {
      host: sshd.host,
      port: sshd.port,
      username: sshd.username,
      privateKeyFile: keyFile,
      hostKey: { sha256: [sshd.hostKeySha256] },
      keepaliveMs: 10_000,
      readyTimeoutMs: 10_000,
    };
    let thrown: unknown;
    try {
      endpointFromConfig(config, 'returns.proofs.target');
    } catch (err) {
      thrown = err;
    }
    const err = await caughtDocex(Promise.reject(thrown));
    expect(err.code).toBe('DOCEX_CONFIG_SECRET_PERMISSIONS');
    expect(err.message).toContain('returns.proofs.target.privateKeyFile');
    chmodSync(keyFile, 0o600);
    expect((await connect(endpointFromConfig(config))).result).toBe('ok');
  });

  it('connects with no secret in any log line at debug level', async () => {
    const { capture } = await connect(sshdEndpoint(sshd));
    const logged = capture.raw();
    expect(logged).toContain(sshd.hostKeySha256);
    expect(logged).not.toContain(sshd.privateKey.toString('utf8').split('\n')[1]);
  });
});
