import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companySchema, departmentSchema, healthSchema, userSchema } from '../../src/domain/wire.js';
import { encodeUsageCursor, USAGE_EVENT_KIND } from '../../src/sandbox/routes/usage-query.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, startHarness } from './webhooks-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

const managed = { 'x-managed-company-id': SEED.managedCompanyId };
const address = { street: 'Kerkstraat', streetNr: '1', postalCode: '9000', city: 'Gent', countryCode: 'BE' };

describe('companies', () => {
  it('lists the companies the technology partner manages', async () => {
    const res = await h.call('GET', '/companies');
    expect(res.status).toBe(200);
    expect(res.body.totalItems).toBe(2);
    expect(res.body.items.map((c: { id: string }) => c.id)).toEqual([
      SEED.managedCompanyId,
      SEED.secondManagedCompanyId,
    ]);
    for (const item of res.body.items) {
      expect(item).toMatchObject({ role: 'MANAGED_COMPANY', technologyPartnerId: SEED.partnerCompanyId });
      expect(companySchema.safeParse(item).success).toBe(true);
    }
  });

  it('reads its own and managed companies, not others', async () => {
    const own = await h.call('GET', `/companies/${SEED.partnerCompanyId}`);
    expect(own.body).toMatchObject({
      role: 'TECHNOLOGY_PARTNER',
      managedCompanyIds: [SEED.managedCompanyId, SEED.secondManagedCompanyId],
    });
    expect((await h.call('GET', `/companies/${SEED.managedCompanyId}`)).status).toBe(200);
    expect((await h.call('GET', `/companies/${SEED.secondManagedCompanyId}`)).status).toBe(200);
    expect((await h.call('GET', `/companies/${SEED.otherCompanyId}`)).status).toBe(403);
    expect((await h.call('GET', '/companies/cmp_nope')).status).toBe(404);
  });

  it('creates a managed company with 201 and lists it afterwards', async () => {
    const body = {
      erpId: 'ERP-NEW',
      name: 'New Client',
      headAddress: address,
      isActive: true,
      identifiers: [{ type: 'VAT_NUMBER', value: 'BE1' }],
    };
    const res = await h.call('POST', '/companies', { body });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ...body,
      role: 'MANAGED_COMPANY',
      technologyPartnerId: SEED.partnerCompanyId,
      lastModifiedBy: 'Partner.API',
    });
    const list = await h.call('GET', '/companies');
    expect(list.body.items.map((c: { id: string }) => c.id)).toContain(res.body.id);
    const patched = await h.call('PATCH', `/companies/${res.body.id}`, { body: { name: 'Renamed Client' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Renamed Client', erpId: 'ERP-NEW' });
  });

  it('answers 400 with errors[] naming the missing and malformed fields', async () => {
    const res = await h.call('POST', '/companies', {
      body: { name: 'X', emailAddress: 'not-an-email', headAddress: address },
    });
    expect(res.status).toBe(400);
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['erpId', 'isActive', 'identifiers', 'emailAddress']));
  });
});

describe('departments', () => {
  it('lists, reads and updates departments of the company', async () => {
    const list = await h.call('GET', '/departments');
    expect(list.body.items.map((d: { id: string }) => d.id)).toEqual([
      SEED.partnerDepartmentId,
      'dep_partner_billing',
    ]);
    for (const d of list.body.items) expect(departmentSchema.safeParse(d).success).toBe(true);
    const patched = await h.call('PATCH', '/departments/dep_partner_billing', {
      body: { hasSeparateInvoicing: true },
    });
    expect(patched.body).toMatchObject({ id: 'dep_partner_billing', hasSeparateInvoicing: true });
    expect((await h.call('GET', '/departments/dep_partner_billing')).body.hasSeparateInvoicing).toBe(true);
    expect((await h.call('GET', `/departments/${SEED.managedDepartmentId}`)).status).toBe(403);
  });

  it('creates a department only with x-managed-company-id, in that company', async () => {
    const body = { name: 'Sales', headAddress: address, hasSeparateInvoicing: false, isActive: true };
    expect((await h.call('POST', '/departments', { body })).status).toBe(400);
    const res = await h.call('POST', '/departments', { body, headers: managed });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ...body,
      companyId: SEED.managedCompanyId,
      lastModifiedBy: 'Partner.API',
    });
    expect(res.body.erpId).toEqual(expect.any(String));
    expect(res.body.erpId.length).toBeGreaterThan(0);
    const list = await h.call('GET', '/departments', { headers: managed });
    expect(list.body.items.map((d: { id: string }) => d.id)).toContain(res.body.id);
  });
});

describe('users', () => {
  const user = {
    username: 'new@managed.example',
    role: 'CLIENT_OPERATOR',
    departments: [SEED.managedDepartmentId],
    firstName: 'Nina',
    lastName: 'New',
    preferredLanguage: 'NL',
    emailAddress: 'new@managed.example',
    enabled: true,
    hasQERDSMandate: false,
  };

  it('creates a user with x-managed-company-id and answers the full record', async () => {
    expect((await h.call('POST', '/users', { body: user })).status).toBe(400);
    const res = await h.call('POST', '/users', { body: user, headers: managed });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...user, companyId: SEED.managedCompanyId, hasMFALoginEnabled: false });
    expect(userSchema.safeParse(res.body).success).toBe(true);
    const read = await h.call('GET', `/users/${res.body.id}`, { headers: managed });
    expect(read.body).toEqual(res.body);
    const patched = await h.call('PATCH', `/users/${res.body.id}`, {
      body: { enabled: false },
      headers: managed,
    });
    expect(patched.body.enabled).toBe(false);
  });

  it('rejects a bad email, an unknown role and a department of another company', async () => {
    const bad = await h.call('POST', '/users', {
      body: { ...user, emailAddress: 'nope', role: 'SUPER_USER' },
      headers: managed,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['emailAddress', 'role']);
    const foreign = await h.call('POST', '/users', {
      body: { ...user, departments: [SEED.partnerDepartmentId] },
      headers: managed,
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0].field).toBe('departments.0');
  });

  it("lists the partner's seeded users", async () => {
    const res = await h.call('GET', '/users');
    expect(res.body.items.map((u: { id: string }) => u.id)).toEqual([
      'usr_partner_admin',
      'usr_partner_operator',
    ]);
  });
});

describe('usage', () => {
  beforeAll(() => {
    const events = [
      {
        id: 'use_1',
        timestamp: '2026-11-01T10:00:00.000Z',
        departmentId: SEED.partnerDepartmentId,
        channel: 'EMAIL',
        unit: 'SENDING',
        quantity: 1,
      },
      {
        id: 'use_2',
        timestamp: '2026-11-01T11:00:00.000Z',
        departmentId: SEED.partnerDepartmentId,
        channel: 'EMAIL',
        unit: 'SENDING',
        quantity: 2,
      },
      {
        id: 'use_3',
        timestamp: '2026-11-02T10:00:00.000Z',
        departmentId: 'dep_partner_billing',
        channel: 'EASY_PRINT',
        unit: 'PAGE',
        quantity: 3,
      },
      {
        id: 'use_4',
        timestamp: '2026-11-03T10:00:00.000Z',
        channel: 'EASY_PRINT',
        unit: 'SENDING',
        quantity: 1,
      },
      { id: 'use_5', timestamp: '2026-12-01T00:00:00.000Z', channel: 'EMAIL', unit: 'SENDING', quantity: 9 },
    ];
    for (const e of events) {
      h.sandbox.ctx.store.insert(
        USAGE_EVENT_KIND,
        { ...e, companyId: SEED.partnerCompanyId, jobId: 'job_x', sendingEventId: `se_${e.id}` },
        { companyId: SEED.partnerCompanyId },
      );
    }
    h.sandbox.ctx.store.insert(
      USAGE_EVENT_KIND,
      {
        id: 'use_other',
        timestamp: '2026-11-01T10:00:00.000Z',
        companyId: SEED.otherCompanyId,
        channel: 'EMAIL',
        unit: 'SENDING',
        quantity: 100,
      },
      { companyId: SEED.otherCompanyId },
    );
  });

  const range = 'from=2026-11-01T00:00:00.000Z&until=2026-12-01T00:00:00.000Z';

  it('totals usage per channel and unit, until exclusive', async () => {
    const res = await h.call('GET', `/usage?${range}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      companyId: SEED.partnerCompanyId,
      from: '2026-11-01T00:00:00.000Z',
      until: '2026-12-01T00:00:00.000Z',
      totals: [
        { channel: 'EASY_PRINT', unit: 'PAGE', count: 3 },
        { channel: 'EASY_PRINT', unit: 'SENDING', count: 1 },
        { channel: 'EMAIL', unit: 'SENDING', count: 3 },
      ],
    });
    const dep = await h.call('GET', `/usage?${range}&departmentId=dep_partner_billing`);
    expect(dep.body.totals).toEqual([{ channel: 'EASY_PRINT', unit: 'PAGE', count: 3 }]);
    expect((await h.call('GET', '/usage?from=2026-11-01')).status).toBe(400);
  });

  it('scrolls usage details with an opaque cursor until no nextCursor is given', async () => {
    const first = await h.call('GET', `/usage/details?${range}&maxItems=2`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((e: { id: string }) => e.id)).toEqual(['use_1', 'use_2']);
    expect(first.body.nextCursor).toBe(encodeUsageCursor('use_2'));
    const second = await h.call('GET', `/usage/details?${range}&maxItems=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((e: { id: string }) => e.id)).toEqual(['use_3', 'use_4']);
    expect(second.body.nextCursor).toBeUndefined();
  });

  it('keeps only department usage of the given departmentIds', async () => {
    const res = await h.call(
      'GET',
      `/usage/details?${range}&departmentIds=dep_partner_billing,${SEED.partnerDepartmentId}`,
    );
    expect(res.body.items.map((e: { id: string }) => e.id)).toEqual(['use_1', 'use_2', 'use_3']);
  });

  it('answers 400 for a bad range, format, cursor or page size, and 403 for a foreign company', async () => {
    for (const query of [
      'from=2026-12-01T00:00:00.000Z&until=2026-11-01T00:00:00.000Z',
      'from=2026-11-01T00:00:00Z&until=2026-12-01T00:00:00.000Z',
      'until=2026-12-01T00:00:00.000Z',
      `${range}&cursor=${encodeUsageCursor('use_nope')}`,
      `${range}&cursor=%25%25%25`,
      `${range}&maxItems=0`,
    ]) {
      expect((await h.call('GET', `/usage/details?${query}`)).status, query).toBe(400);
    }
    expect((await h.call('GET', `/usage/details?${range}&companyId=${SEED.otherCompanyId}`)).status).toBe(
      403,
    );
  });
});

describe('GET /health', () => {
  it('answers ok, the version and the sandbox time', async () => {
    const res = await h.call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', version: '1.0.0' });
    expect(healthSchema.safeParse(res.body).success).toBe(true);
    expect(Math.abs(Date.parse(res.body.time) - Date.now())).toBeLessThan(60_000);
  });
});
