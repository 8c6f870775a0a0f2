/**
 * A server with two host keys and a known_hosts file that lists only one of them: the client must
 * ask for the listed key's type, or the server presents another key and is refused as "changed".
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownHostKeyAlgorithms } from '../../src/sftp/host-key.js';
import { openSftpServer } from '../../src/sftp/server.js';
import { captureLogger } from '../api/support/log-capture.js';
import { sshdEndpoint } from '../sources/sftp/support/endpoint.js';
import { describeSshd, startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'docex-hostkey-types-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function keyOfType(name: string, type: 'ecdsa' | 'rsa'): string {
  const file = path.join(tmp, name);
  const bits = type === 'rsa' ? ['-b', '2048'] : [];
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', type, ...bits, '-N', '', '-C', name, '-f', file]);
  return file;
}

const publicPart = (file: string) =>
  readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');

describe('host key algorithms offered from known_hosts', () => {
  it('offers the types of the lines naming this host, RSA with its SHA-2 signatures, in file order', () => {
    const ecdsa = `ecdsa-sha2-nistp256 ${Buffer.concat([len('ecdsa-sha2-nistp256'), Buffer.from('x')]).toString('base64')}`;
    const rsa = `ssh-rsa ${Buffer.concat([len('ssh-rsa'), Buffer.from('y')]).toString('base64')}`;
    const ed = `ssh-ed25519 ${Buffer.concat([len('ssh-ed25519'), Buffer.from('z')]).toString('base64')}`;
    const text = [
      `[127.0.0.1]:2222 ${ecdsa}`,
      `other.example.com ${ed}`,
      `@revoked [127.0.0.1]:2222 ${ed}`,
      `[127.0.0.1]:2222 ${rsa}`,
    ].join('\n');
    expect(knownHostKeyAlgorithms(text, '127.0.0.1', 2222)).toEqual([
      'ecdsa-sha2-nistp256',
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
    expect(knownHostKeyAlgorithms(text, '127.0.0.1', 22)).toEqual([]);
  });
});

function len(s: string): Buffer {
  const b = Buffer.alloc(4 + s.length);
  b.writeUInt32BE(s.length, 0);
  b.write(s, 4, 'latin1');
  return b;
}

describeSshd('a server with an ed25519 and an ECDSA host key', () => {
  let sshd: TestSshd;
  let ecdsaKey: string;
  beforeAll(async () => {
    ecdsaKey = keyOfType('host_ecdsa', 'ecdsa');
    sshd = await startSshd({ extraConfig: [`HostKey ${ecdsaKey}`] });
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  async function listWith(knownHosts: string): Promise<unknown> {
    const file = path.join(tmp, `known_hosts_${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, knownHosts);
    const server = openSftpServer(sshdEndpoint(sshd, { hostKey: { knownHostsFile: file } }), {
      log: captureLogger().log,
    });
    try {
      return await server.list(sshd.files).then(
        () => 'ok',
        (e: unknown) => e,
      );
    } finally {
      await server.close();
    }
  }

  it('connects when known_hosts lists only the ECDSA key (the client asks for that type)', async () => {
    expect(await listWith(`[127.0.0.1]:${sshd.port} ${publicPart(ecdsaKey)}\n`)).toBe('ok');
  });

  it('still connects when known_hosts lists only the ed25519 key', async () => {
    const line = readFileSync(sshd.knownHostsFile, 'utf8');
    expect(await listWith(line)).toBe('ok');
  });

  it('refuses as changed when the listed ECDSA key is not the server one', async () => {
    const other = keyOfType('not_the_server', 'ecdsa');
    const result = await listWith(`[127.0.0.1]:${sshd.port} ${publicPart(other)}\n`);
    expect(result).toMatchObject({ code: 'DOCEX_SFTP_HOST_KEY', details: { reason: 'changed' } });
  });
});
