// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the layout's ${credential:} references, literally
import { execFileSync, spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type CheckLine, formatCheck } from '../../src/cli/check-line.js';
import { inspectTlsMaterial } from '../../src/cli/credentials-inspect.js';
import {
  CREDENTIAL_CONFIG,
  createCredentials,
  credentialsCheckLines,
  initInstructions,
} from '../../src/cli/credentials-runner.js';
import { ensurePki, type SandboxPki } from '../../src/sandbox/pki.js';

let dir: string;
let pki: SandboxPki;
let otherPki: SandboxPki;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-credentials-'));
  pki = ensurePki(path.join(dir, 'pki'));
  otherPki = ensurePki(path.join(dir, 'other-pki'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const material = (p: SandboxPki, key = p.clientKeyPem) => ({ ca: p.caCertPem, cert: p.clientCertPem, key });
const byWhat = (lines: CheckLine[], what: string) => lines.find((l) => l.what === what);

describe('docex-agent credentials init', () => {
  it('writes a 2048-bit RSA key of mode 0600 and a CSR that openssl req -verify accepts, for that key and CN', () => {
    const out = path.join(dir, 'init');
    const result = createCredentials({ cn: 'acme-erp-01', out, org: 'ACME', country: 'BE' });
    expect(result.keyFile).toBe(path.join(out, 'client.key'));
    expect(statSync(result.keyFile).mode & 0o777).toBe(0o600);
    const key = createPrivateKey(readFileSync(result.keyFile));
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);

    const verify = spawnSync('openssl', ['req', '-verify', '-in', result.csrFile, '-noout', '-subject'], {
      encoding: 'utf8',
    });
    expect(verify.status).toBe(0);
    expect(`${verify.stdout}${verify.stderr}`).toMatch(/verify OK/i);
    expect(verify.stdout).toMatch(/subject=CN\s*=\s*acme-erp-01, O\s*=\s*ACME, C\s*=\s*BE/);
    const csrKey = execFileSync('openssl', ['req', '-in', result.csrFile, '-noout', '-pubkey'], {
      encoding: 'utf8',
    });
    expect(createPublicKey(csrKey).export({ type: 'spki', format: 'der' })).toEqual(
      createPublicKey(key).export({ type: 'spki', format: 'der' }),
    );
    expect(readFileSync(result.csrFile, 'utf8')).toBe(result.csrPem);
  });

  it('refuses to overwrite an existing key or request and leaves them untouched', () => {
    const out = path.join(dir, 'twice');
    const first = createCredentials({ cn: 'twice', out });
    const keyBefore = readFileSync(first.keyFile, 'utf8');
    expect(() => createCredentials({ cn: 'twice', out })).toThrow(/client.key exists; refusing to overwrite/);
    expect(readFileSync(first.keyFile, 'utf8')).toBe(keyBefore);
    rmSync(first.keyFile);
    expect(() => createCredentials({ cn: 'twice', out })).toThrow(/client.csr exists; refusing to overwrite/);
  });

  it('refuses an empty common name', () => {
    expect(() => createCredentials({ cn: '  ', out: path.join(dir, 'empty') })).toThrow(/--cn/);
  });

  it('says where to paste the request and where the certificate and secrets go, with the request itself', () => {
    const result = createCredentials({ cn: 'printed', out: path.join(dir, 'printed') });
    const text = initInstructions(result, 'printed');
    expect(text).toContain('Connect API tab');
    expect(text).toContain(`save it as ${path.join(dir, 'printed', 'client.pem')}`);
    expect(text).toContain(`CA certificate as ${path.join(dir, 'printed', 'ca.pem')}`);
    expect(text).toContain(path.join(dir, 'printed', 'client-secret'));
    expect(text).toContain('-----BEGIN CERTIFICATE REQUEST-----');
    expect(text).not.toContain('PRIVATE KEY');
  });

  it('prints the one credentials layout: every file by name through CREDENTIALS_DIRECTORY, as the systemd guide writes it', () => {
    const result = createCredentials({ cn: 'layout', out: path.join(dir, 'layout') });
    const text = initInstructions(result, 'layout');
    for (const line of [
      'clientSecret: ${credential:client-secret}',
      'apiKey: ${credential:api-key}',
      'caFile: ${env:CREDENTIALS_DIRECTORY}/ca.pem',
      'certFile: ${env:CREDENTIALS_DIRECTORY}/client.pem',
      'keyFile: ${env:CREDENTIALS_DIRECTORY}/client.key',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).not.toContain('${file:');
    const guide = readFileSync('systemd/README.md', 'utf8');
    const unit = readFileSync('systemd/docex-agent.service', 'utf8');
    expect(guide).toContain(CREDENTIAL_CONFIG.split('\n').slice(2).join('\n'));
    for (const name of ['client-secret', 'api-key', 'client.key', 'client.pem', 'ca.pem']) {
      expect(unit).toContain(`LoadCredential=${name}:/etc/docex-agent/credentials/${name}\n`);
    }
  });

  it('produces a request a CA can sign into a certificate that credentials check accepts (the whole set-up)', () => {
    const out = path.join(dir, 'signed');
    const result = createCredentials({ cn: 'signed-client', out });
    const certFile = path.join(out, 'client.pem');
    const caKey = path.join(dir, 'ca-key-copy.pem');
    writeFileSync(caKey, pki.caKeyPem, { mode: 0o600 });
    execFileSync(
      'openssl',
      [
        'x509',
        '-req',
        '-in',
        result.csrFile,
        '-CA',
        pki.paths.caCert,
        '-CAkey',
        caKey,
        '-set_serial',
        '7',
        '-days',
        '20',
        '-sha256',
        '-out',
        certFile,
      ],
      { stdio: 'pipe' },
    );
    const lines = credentialsCheckLines({ cert: certFile, key: result.keyFile, ca: pki.paths.caCert });
    expect(lines.every((l) => l.ok)).toBe(true);
    expect(byWhat(lines, 'key and certificate')?.detail).toContain('CN=signed-client');
    // 20 days: valid, but a warning to renew
    expect(byWhat(lines, 'certificate expiry')).toMatchObject({ ok: true, warn: true });
  });
});

describe('docex-agent credentials check', () => {
  it('passes on the sandbox PKI named by a configuration file', () => {
    const config = path.join(dir, 'agent.yaml');
    writeFileSync(
      config,
      stringify({
        service: {
          apiUrl: 'https://127.0.0.1:1/v1',
          authUrl: 'https://127.0.0.1:2',
          clientId: 'c',
          clientSecret: 's',
          apiKey: 'k',
          tls: { caFile: pki.paths.caCert, certFile: pki.paths.clientCert, keyFile: pki.paths.clientKey },
        },
      }),
    );
    const lines = credentialsCheckLines({ config });
    expect(lines.map((l) => [l.what, l.ok, l.warn ?? false])).toEqual([
      ['tls files', true, false],
      ['private key', true, false],
      ['key and certificate', true, false],
      ['certificate chain', true, false],
      ['certificate expiry', true, false],
    ]);
    expect(byWhat(lines, 'certificate chain')?.detail).toBe(
      'signed by CN=docex sandbox CA of the configured CA',
    );
  });

  it('fails when the key does not belong to the certificate', () => {
    const lines = inspectTlsMaterial(material(pki, otherPki.clientKeyPem), new Date());
    const match = byWhat(lines, 'key and certificate');
    expect(match?.ok).toBe(false);
    expect(match?.detail).toMatch(/does not belong/);
    expect(formatCheck(match!, { plain: true })).toMatch(/^FAIL key and certificate: .*\n {4}fix: /);
  });

  it('fails on a key file readable by others, before reading it', () => {
    const key = path.join(dir, 'open.key');
    writeFileSync(key, pki.clientKeyPem, { mode: 0o644 });
    const lines = credentialsCheckLines({ cert: pki.paths.clientCert, key, ca: pki.paths.caCert });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ ok: false, what: 'tls files' });
    expect(lines[0]?.detail).toContain('DOCEX_CONFIG_SECRET_PERMISSIONS');
    expect(lines[0]?.detail).toContain(`chmod 600 ${key}`);
  });

  it('warns when the certificate does not chain to the configured CA', () => {
    const lines = inspectTlsMaterial({ ...material(pki), ca: otherPki.caCertPem }, new Date());
    expect(byWhat(lines, 'certificate chain')).toMatchObject({ ok: true, warn: true });
    expect(byWhat(lines, 'certificate chain')?.detail).toMatch(
      /^not signed by the CA in caFile; issuer .*docex sandbox CA/,
    );
  });

  it('counts the days to expiry: a warning under 30 days, a failure once expired or before it is valid', () => {
    const cert = new X509Certificate(pki.clientCertPem);
    const validTo = new Date(cert.validTo).getTime();
    const expiry = (now: number) =>
      byWhat(inspectTlsMaterial(material(pki), new Date(now)), 'certificate expiry');
    expect(expiry(validTo - 31 * DAY - 1000)).toMatchObject({ ok: true, warn: false });
    expect(expiry(validTo - 31 * DAY - 1000)?.detail).toMatch(/^31 days left/);
    expect(expiry(validTo - 29 * DAY - 1000)).toMatchObject({ ok: true, warn: true });
    expect(expiry(validTo + 1000)).toMatchObject({ ok: false });
    expect(expiry(validTo + 1000)?.detail).toMatch(/^expired on /);
    expect(expiry(new Date(cert.validFrom).getTime() - DAY)?.detail).toMatch(/^not valid before /);
  });

  it('warns on a key that is not 2048-bit RSA', () => {
    const ec = execFileSync(
      'openssl',
      ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
      {
        encoding: 'utf8',
      },
    );
    const lines = inspectTlsMaterial(material(pki, ec), new Date());
    expect(byWhat(lines, 'private key')).toMatchObject({ ok: true, warn: true });
    expect(byWhat(lines, 'key and certificate')?.ok).toBe(false);
  });
});
