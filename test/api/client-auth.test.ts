import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { caught } from './support/caught.js';
import { API_KEY, FakeService, fakeClient, JOB } from './support/fake-service.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { json, problem } from './support/test-server.js';

let pki: TestPki;
let fake: FakeService;

beforeAll(async () => {
  pki = makeTestPki();
});

beforeEach(async () => {
  fake = await FakeService.start(pki);
  fake.on('GET', '/jobs/job_1', (_req, res) => json(res, 200, JOB));
  return () => fake.close();
});

afterAll(() => undefined);

describe('token provider', () => {
  it('requests one token and reuses it for later calls', async () => {
    const client = fakeClient(fake, pki);
    for (let i = 0; i < 3; i++) await client.jobs.get('job_1');
    await client.close();
    expect(fake.tokenRequests).toBe(1);
    const bearers = new Set(fake.apiCalls().map((c) => c.headers.authorization));
    expect(bearers).toEqual(new Set([`Bearer ${fake.issued[0]}`]));
  });

  it('renews the token once less than refreshBeforeMs of its life remains', async () => {
    const clock = new ManualClock();
    const client = fakeClient(fake, pki, { clock, tokenRefreshBeforeMs: 300_000 });
    await client.jobs.get('job_1');
    clock.advance(3_299_000);
    await client.jobs.get('job_1');
    expect(fake.tokenRequests).toBe(1);
    clock.advance(2_000);
    await client.jobs.get('job_1');
    await client.close();
    expect(fake.tokenRequests).toBe(2);
    expect(fake.apiCalls().at(-1)?.headers.authorization).toBe(`Bearer ${fake.issued[1]}`);
  });

  it('renews a short-lived token at half its life instead of on every call', async () => {
    fake.expiresIn = 60;
    const clock = new ManualClock();
    const client = fakeClient(fake, pki, { clock });
    await client.jobs.get('job_1');
    clock.advance(29_000);
    await client.jobs.get('job_1');
    expect(fake.tokenRequests).toBe(1);
    clock.advance(2_000);
    await client.jobs.get('job_1');
    await client.close();
    expect(fake.tokenRequests).toBe(2);
  });

  it('shares one in-flight token request between ten concurrent calls', async () => {
    fake.tokenDelayMs = 50;
    const client = fakeClient(fake, pki);
    const jobs = await Promise.all(Array.from({ length: 10 }, () => client.jobs.get('job_1')));
    await client.close();
    expect(jobs).toHaveLength(10);
    expect(fake.tokenRequests).toBe(1);
  });

  it('lets one caller abort its wait without failing another caller of the same token request', async () => {
    fake.tokenDelayMs = 300;
    const client = fakeClient(fake, pki);
    const abort = new AbortController();
    const first = client.jobs.get('job_1', { signal: abort.signal });
    const second = client.jobs.get('job_1');
    setTimeout(() => abort.abort(new Error('caller gave up')), 30);
    const [a, b] = await Promise.allSettled([first, second]);
    await client.close();
    expect(a.status).toBe('rejected');
    expect((a as PromiseRejectedResult).reason.message).toBe('caller gave up');
    expect(b.status).toBe('fulfilled');
    expect(fake.tokenRequests).toBe(1);
  });

  it('keeps the cached token while the token endpoint is down before expiry, then fails with DOCEX_AUTH_TOKEN', async () => {
    const clock = new ManualClock();
    const { log, lines } = captureLogger('info');
    const client = fakeClient(fake, pki, { clock, log, tokenRefreshBeforeMs: 300_000 });
    await client.jobs.get('job_1');
    fake.tokenOverride = (res) => problem(res, 503, 'Service Unavailable', 'token service down');
    clock.advance(3_400_000); // past the refresh point (3300 s), before expiry (3600 s)
    await client.jobs.get('job_1');
    expect(fake.tokenRequests).toBe(2); // one early attempt, no retries while a token is valid
    await client.jobs.get('job_1');
    expect(fake.tokenRequests).toBe(2); // the next early attempt waits 30 s, not the next call
    clock.advance(210_000); // expired
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_AUTH_TOKEN');
    expect(err.status).toBe(503);
    expect(fake.tokenRequests).toBeGreaterThan(3); // the expired case retries
    const bearers = fake.apiCalls('/jobs/job_1').map((c) => c.headers.authorization);
    expect(bearers).toEqual(Array(3).fill(`Bearer ${fake.issued[0]}`));
    const warns = lines().filter((l) => l['level'] === 'warn');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      code: 'DOCEX_AUTH_TOKEN',
      msg: 'token refresh failed, keeping the cached token',
    });
  });

  it('retries a 401 exactly once, with a token fresh from the server', async () => {
    const client = fakeClient(fake, pki);
    await client.jobs.get('job_1');
    fake.revokeAll();
    const job = await client.jobs.get('job_1');
    await client.close();
    expect(job.id).toBe('job_1');
    expect(fake.tokenRequests).toBe(2);
    const last = fake.apiCalls().slice(-2);
    expect(last.map((c) => c.headers.authorization)).toEqual([
      `Bearer ${fake.issued[0]}`,
      `Bearer ${fake.issued[1]}`,
    ]);
  });

  it('surfaces a second 401 as DOCEX_API_401 after one retry', async () => {
    fake.on('GET', '/jobs/always-401', (_req, res) => json(res, 401, { title: 'Unauthorized', status: 401 }));
    const client = fakeClient(fake, pki);
    const err = await caught(client.jobs.get('always-401'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_401');
    expect(err.route).toBe('/jobs/{id}');
    expect(fake.apiCalls('/jobs/always-401')).toHaveLength(2);
    expect(fake.tokenRequests).toBe(2);
  });

  it('reports a refused client secret as DOCEX_AUTH_TOKEN with the OAuth error', async () => {
    const client = fakeClient(fake, pki, { clientSecret: 'wrong-secret-value' });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_AUTH_TOKEN');
    expect(err.status).toBe(401);
    expect(err.problem?.title).toBe('invalid_client');
    expect(fake.apiCalls()).toHaveLength(0);
  });

  it('reports an unreachable token endpoint as DOCEX_AUTH_TOKEN', async () => {
    const client = fakeClient(fake, pki, { authUrl: 'https://127.0.0.1:1', retry: { maxAttempts: 1 } });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_AUTH_TOKEN');
    expect(err.message).toContain('ECONNREFUSED');
  });
});

describe('auth layers on every call', () => {
  it('sends x-api-key, the bearer token and the default managed company, which a call can override', async () => {
    const client = fakeClient(fake, pki, { managedCompanyId: 'cmp_managed' });
    await client.jobs.get('job_1');
    await client.jobs.get('job_1', { managedCompanyId: 'cmp_other' });
    await client.close();
    const [first, second] = fake.apiCalls();
    expect(first?.headers['x-api-key']).toBe(API_KEY);
    expect(first?.headers.authorization).toMatch(/^Bearer tok-/);
    expect(first?.headers['x-managed-company-id']).toBe('cmp_managed');
    expect(second?.headers['x-managed-company-id']).toBe('cmp_other');
  });

  it('reports a wrong API key as DOCEX_API_403', async () => {
    const client = fakeClient(fake, pki, { apiKey: 'not-the-key' });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_403');
    expect(err.problem?.detail).toContain('x-api-key');
  });

  it('reports a client certificate from another CA as DOCEX_TLS', async () => {
    const client = fakeClient(fake, pki, {
      tls: { ca: pki.caCertPem, cert: pki.rogueClient.certPem, key: pki.rogueClient.keyPem },
    });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_TLS');
    expect(err.message).toContain('PEER_CLOSED_AFTER_HANDSHAKE');
    expect(fake.calls).toHaveLength(0);
  });

  it('reports a connection without a client certificate as DOCEX_TLS naming the TLS alert', async () => {
    const client = fakeClient(fake, pki, {
      tls: { ca: pki.caCertPem, cert: '', key: '' },
    });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_TLS');
    expect(err.message).toContain('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
  });

  it('reports a server certificate not signed by the pinned CA as DOCEX_TLS', async () => {
    const other = makeTestPki();
    const client = fakeClient(fake, pki, {
      tls: { ca: other.caCertPem, cert: pki.client.certPem, key: pki.client.keyPem },
    });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_TLS');
    expect(err.message).toMatch(/CERT/);
  });
});
