import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { outputTargetSchema } from '../../src/config/output-schema.js';
import { resolveOutputTarget } from '../../src/config/resolve-paths.js';
import { resolveSftpConnectionPaths, sftpConnectionSchema } from '../../src/config/sftp-schema.js';

const PIN = 'SHA256:hB2HALNNQwbyi/6kduVzlUWsY7vDlMmfoqnIG2cTxcY';
const base = {
  host: 'sftp.example.com',
  username: 'erp',
  privateKeyFile: './keys/id',
  hostKey: { sha256: [PIN] },
};

function problems(input: unknown): string[] {
  const result = sftpConnectionSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('SFTP connection schema', () => {
  it('fills the defaults: port 22, keepalive 15 s, ready timeout 20 s', () => {
    expect(sftpConnectionSchema.parse(base)).toMatchObject({
      port: 22,
      keepaliveMs: 15_000,
      readyTimeoutMs: 20_000,
    });
  });

  it('accepts durations and a port given as text (as an env reference yields them)', () => {
    const parsed = sftpConnectionSchema.parse({
      ...base,
      port: '2222',
      keepaliveMs: '30s',
      readyTimeoutMs: '5s',
    });
    expect(parsed).toMatchObject({ port: 2222, keepaliveMs: 30_000, readyTimeoutMs: 5_000 });
  });

  it('requires a host key pin: no hostKey, or an empty one, is refused (never trust on first use)', () => {
    const { hostKey: _, ...noPin } = base;
    expect(problems(noPin).join()).toMatch(/hostKey/);
    expect(problems({ ...base, hostKey: {} }).join()).toMatch(/never trusted/);
  });

  it('refuses a fingerprint that is not SHA256:<base64>', () => {
    expect(problems({ ...base, hostKey: { sha256: ['MD5:aa:bb'] } }).join()).toMatch(/ssh-keygen/);
  });

  it('needs a password or a private key; a passphrase only with a key', () => {
    const { privateKeyFile: _, ...noAuth } = base;
    expect(problems(noAuth).join()).toMatch(/give a password or a privateKeyFile/);
    expect(problems({ ...noAuth, password: 'pw' })).toEqual([]);
    expect(problems({ ...noAuth, password: 'pw', passphrase: 'x' }).join()).toMatch(
      /passphrase needs a privateKeyFile/,
    );
  });

  it('resolves the key and known_hosts files against the config folder', () => {
    const conn = sftpConnectionSchema.parse({ ...base, hostKey: { knownHostsFile: 'known_hosts' } });
    const resolved = resolveSftpConnectionPaths(conn, '/etc/docex');
    expect(resolved.privateKeyFile).toBe(path.resolve('/etc/docex/keys/id'));
    expect(resolved.hostKey.knownHostsFile).toBe('/etc/docex/known_hosts');
  });
});

describe('SFTP output target config', () => {
  it('parses type sftp with path and staging; resolving keeps the remote path as the server has it', () => {
    const target = outputTargetSchema.parse({
      type: 'sftp',
      ...base,
      path: 'out/proofs',
      staging: '/tmp/st',
    });
    expect(target).toMatchObject({ type: 'sftp', path: 'out/proofs', staging: '/tmp/st', port: 22 });
    const resolved = resolveOutputTarget(target, '/etc/docex');
    expect(resolved).toMatchObject({
      path: 'out/proofs',
      privateKeyFile: path.resolve('/etc/docex/keys/id'),
    });
  });

  it('refuses an SFTP target without a login method', () => {
    const { privateKeyFile: _, ...noAuth } = base;
    expect(outputTargetSchema.safeParse({ type: 'sftp', ...noAuth, path: '/out' }).success).toBe(false);
  });
});
