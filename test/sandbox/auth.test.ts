import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from '../../src/sandbox/pki.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox } from './sandbox-harness.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => {
  await t?.stop();
});

/**
 * Connects with raw TLS and sends one request: the TLS alert code the server refused with, or
 * 'answered' when an HTTP answer came back. Pins the failure to the handshake, not to a refused port.
 */
function tlsOutcome(url: string, identity: { cert?: string; key?: string } = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: hostname,
      port: Number(port),
      ca: t.sandbox.credentials.caCertPem,
      ...identity,
    });
    socket.once('secureConnect', () => socket.write(`GET /health HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`));
    socket.once('data', (chunk: Buffer) => {
      resolve(chunk.toString('latin1').startsWith('HTTP/1.1') ? 'answered' : 'garbage');
      socket.destroy();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('close', () => resolve('closed without an answer'));
  });
}

describe('mutual TLS', () => {
  it('fails the TLS handshake of the API host without a client certificate', async () => {
    const c = t.sandbox.credentials;
    // The same port answers a client with the right certificate: the refusal is the handshake's.
    expect(await tlsOutcome(t.sandbox.urls.api, { cert: c.clientCertPem, key: c.clientKeyPem })).toBe(
      'answered',
    );
    expect(await tlsOutcome(t.sandbox.urls.api)).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    const agent = new Agent({ connect: { ca: c.caCertPem } });
    const err = await request(`${t.sandbox.urls.api}/health`, { dispatcher: agent }).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toBe('UND_ERR_SOCKET');
    await agent.close();
  });

  it('fails the handshake with a client certificate from another CA', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s1-pki-'));
    try {
      const other = ensurePki(dir);
      const identity = { cert: other.clientCertPem, key: other.clientKeyPem };
      const own = { cert: t.sandbox.credentials.clientCertPem, key: t.sandbox.credentials.clientKeyPem };
      expect(await tlsOutcome(t.sandbox.urls.auth, own)).toBe('answered');
      // TLS 1.3: the client's side of the handshake completes, then the server drops it unanswered.
      expect(await tlsOutcome(t.sandbox.urls.auth, identity)).toBe('closed without an answer');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('token endpoint', () => {
  const post = (form: Record<string, string>) =>
    request(`${t.sandbox.urls.auth}/oauth2/token`, {
      method: 'POST',
      dispatcher: t.mtls,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });

  it('issues a bearer token for 3600 s to the right client', async () => {
    const c = t.sandbox.credentials;
    const res = await post({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.clientSecret,
    });
    expect(res.statusCode).toBe(200);
    const body = (await res.body.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ expires_in: 3600, token_type: 'Bearer' });
    expect(typeof body['access_token']).toBe('string');
  });

  it('answers 401 invalid_client to a wrong secret', async () => {
    const c = t.sandbox.credentials;
    const res = await post({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: 'nope',
    });
    expect(res.statusCode).toBe(401);
    expect(await res.body.json()).toEqual({ error: 'invalid_client' });
  });
});

describe('API host header layers', () => {
  const call = async (headers: Record<string, string>) => {
    const res = await request(`${t.sandbox.urls.api}/health`, { dispatcher: t.mtls, headers });
    await res.body.dump();
    return res.statusCode;
  };

  it('answers 403 to a missing or wrong x-api-key, even with a valid token', async () => {
    const token = await t.token();
    expect(await call({ authorization: `Bearer ${token}` })).toBe(403);
    expect(await call({ authorization: `Bearer ${token}`, 'x-api-key': 'wrong' })).toBe(403);
    expect(await call({ authorization: `Bearer ${token}`, 'x-api-key': t.sandbox.credentials.apiKey })).toBe(
      200,
    );
  });

  it('answers 401 to a missing or unknown bearer token', async () => {
    const apiKey = t.sandbox.credentials.apiKey;
    expect(await call({ 'x-api-key': apiKey })).toBe(401);
    expect(await call({ 'x-api-key': apiKey, authorization: 'Bearer not-a-token' })).toBe(401);
  });

  it('answers 401 once the token has expired on the sandbox clock', async () => {
    const token = await t.token();
    const headers = { 'x-api-key': t.sandbox.credentials.apiKey, authorization: `Bearer ${token}` };
    await t.advance(3599_000);
    expect(await call(headers)).toBe(200);
    await t.advance(2_000);
    expect(await call(headers)).toBe(401);
  });

  it('lets the partner act for its managed company and refuses any other company', async () => {
    const managed = await t.api('GET', '/jobs', {
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(managed.status).toBe(200);
    const other = await t.api('GET', '/jobs', { headers: { 'x-managed-company-id': SEED.otherCompanyId } });
    expect(other.status).toBe(403);
    expect(other.headers['content-type']).toBe('application/problem+json');
    const unknown = await t.api('GET', '/jobs', { headers: { 'x-managed-company-id': 'cmp_nobody' } });
    expect(unknown.status).toBe(403);
  });

  it('refuses x-managed-company-id once the caller is no longer a TECHNOLOGY_PARTNER', async () => {
    const store = t.sandbox.ctx.store;
    const partner = store.get('company', SEED.partnerCompanyId);
    expect(partner?.['role']).toBe('TECHNOLOGY_PARTNER');
    store.put('company', { ...partner, id: SEED.partnerCompanyId, role: 'REGULAR' });
    try {
      const res = await t.api('GET', '/jobs', { headers: { 'x-managed-company-id': SEED.managedCompanyId } });
      expect(res.status).toBe(403);
      expect((await t.api('GET', '/jobs')).status).toBe(200);
    } finally {
      store.put('company', { ...partner, id: SEED.partnerCompanyId });
    }
  });
});
