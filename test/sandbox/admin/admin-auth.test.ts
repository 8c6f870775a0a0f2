import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { type AdminHarness, startAdminHarness } from './admin-harness.js';

let h: AdminHarness;
beforeAll(async () => {
  h = await startAdminHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('Interface B authentication', () => {
  it('issues a partner-admin token over server TLS without a client certificate', async () => {
    const answer = await h.token();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const info = await h.call('GET', '/api');
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ version: '1.0' });
    expect(typeof info.body.name).toBe('string');
  });

  it('refuses the Interface A client at the admin token endpoint with 401 invalid_client', async () => {
    const c = h.sandbox.credentials;
    const answer = await h.token(c.clientId, c.clientSecret);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: 'invalid_client' });
  });

  it('answers 403 without the x-api-key and 401 without a valid bearer token', async () => {
    expect((await h.call('GET', '/api', { headers: { 'x-api-key': 'wrong' } })).status).toBe(403);
    expect((await h.call('GET', '/api/companies', { bearer: 'not-a-token' })).status).toBe(401);
  });

  it('keeps the tokens of the two interfaces apart', async () => {
    const c = h.sandbox.credentials;
    const mtls = new Agent({ connect: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem } });
    try {
      const tokenA = await request(`${h.sandbox.urls.auth}/oauth2/token`, {
        method: 'POST',
        dispatcher: mtls,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: c.clientId,
          client_secret: c.clientSecret,
        }).toString(),
      });
      const bearerA = ((await tokenA.body.json()) as { access_token: string }).access_token;
      expect((await h.call('GET', '/api/companies', { bearer: bearerA })).status).toBe(401);

      const bearerB = (await h.token()).body.access_token as string;
      const onA = await request(`${h.sandbox.urls.api}/companies`, {
        dispatcher: mtls,
        headers: { authorization: `Bearer ${bearerB}`, 'x-api-key': c.apiKey },
      });
      await onA.body.text();
      expect(onA.statusCode).toBe(401);
    } finally {
      await mtls.close();
    }
  });

  it('accepts x-managed-company-id for a managed company and answers 403 for any other', async () => {
    const managed = await h.call('GET', `/api/companies/${SEED.managedCompanyId}`, {
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(managed.status).toBe(200);
    const other = await h.call('GET', `/api/companies/${SEED.managedCompanyId}`, {
      headers: { 'x-managed-company-id': SEED.otherCompanyId },
    });
    expect(other.status).toBe(403);
  });

  it('lets the partner administer its own and managed companies, not others (403), and 404s unknown ones', async () => {
    expect((await h.call('GET', `/api/companies/${SEED.partnerCompanyId}`)).status).toBe(200);
    expect((await h.call('GET', `/api/company/${SEED.managedCompanyId}/users`)).status).toBe(200);
    expect((await h.call('GET', `/api/companies/${SEED.otherCompanyId}`)).status).toBe(403);
    expect((await h.call('GET', `/api/company/${SEED.otherCompanyId}/departments`)).status).toBe(403);
    expect((await h.call('POST', `/api/company/${SEED.otherCompanyId}/reports`, { body: {} })).status).toBe(
      403,
    );
    expect((await h.call('GET', '/api/companies/cmp_nope')).status).toBe(404);
  });
});
