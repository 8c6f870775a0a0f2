import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import {
  type AdminHarness,
  companyBody,
  departmentBody,
  startAdminHarness,
  userBody,
} from './admin-harness.js';

let h: AdminHarness;
beforeAll(async () => {
  h = await startAdminHarness();
});
afterAll(async () => {
  await h?.stop();
});

const M = SEED.managedCompanyId;

function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const copy = { ...body };
  delete copy[field];
  return copy;
}

async function fieldsOf400(path: string, body: unknown): Promise<string[]> {
  const answer = await h.call('POST', path, { body });
  expect(answer.status).toBe(400);
  expect(answer.body).toMatchObject({ status: 400, title: 'Bad Request' });
  return answer.body.errors.map((e: { field: string }) => e.field);
}

describe('required fields on create', () => {
  const cases: [string, () => string, () => Record<string, unknown>, string[]][] = [
    [
      'company',
      () => '/api/companies',
      companyBody,
      ['erpId', 'name', 'headAddress', 'isActive', 'identifiers'],
    ],
    [
      'department',
      () => `/api/company/${M}/departments`,
      () => departmentBody(M),
      ['companyId', 'erpId', 'name', 'headAddress', 'hasSeparateInvoicing', 'isActive'],
    ],
    [
      'user',
      () => `/api/company/${M}/users`,
      () => userBody(M, [SEED.managedDepartmentId]),
      [
        'companyId',
        'username',
        'role',
        'departments',
        'firstName',
        'lastName',
        'preferredLanguage',
        'emailAddress',
        'hasMFALoginEnabled',
        'hasQERDSMandate',
        'modulesAccess',
        'lastModifiedBy',
        'enabled',
      ],
    ],
  ];
  for (const [name, path, body, required] of cases) {
    it(`answers 400 naming each missing required ${name} field`, async () => {
      for (const field of required) {
        expect(await fieldsOf400(path(), without(body(), field))).toEqual([field]);
      }
    });
  }

  it('checks email formats and enums', async () => {
    expect(await fieldsOf400('/api/companies', { ...companyBody(), emailAddress: 'nope' })).toEqual([
      'emailAddress',
    ]);
    expect(
      await fieldsOf400('/api/companies', { ...companyBody(), identifiers: [{ type: 'SSN', value: '1' }] }),
    ).toEqual(['identifiers.0.type']);
    const user = userBody(M, [SEED.managedDepartmentId]);
    expect(await fieldsOf400(`/api/company/${M}/users`, { ...user, emailAddress: 'x@' })).toEqual([
      'emailAddress',
    ]);
    expect(await fieldsOf400(`/api/company/${M}/users`, { ...user, role: 'ROOT' })).toEqual(['role']);
    expect(await fieldsOf400(`/api/company/${M}/users`, { ...user, modulesAccess: ['FTP'] })).toEqual([
      'modulesAccess.0',
    ]);
    expect(await fieldsOf400(`/api/company/${M}/users`, { ...user, preferredLanguage: 'DE' })).toEqual([
      'preferredLanguage',
    ]);
  });
});

describe('companies', () => {
  it('creates a managed company (201, lastModifiedBy Partner.API), updates, relates and deletes it', async () => {
    const created = await h.call('POST', '/api/companies', { body: companyBody() });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      ...companyBody(),
      isTechnologyPartner: false,
      lastModifiedBy: 'Partner.API',
    });
    expect(created.body).not.toHaveProperty('role');
    const id = created.body.id as string;

    const patched = await h.call('PATCH', `/api/companies/${id}`, {
      body: { phoneNumber: '+32 9 123', lastModifiedBy: 'ops' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      phoneNumber: '+32 9 123',
      name: 'Client via B',
      lastModifiedBy: 'ops',
    });
    expect((await h.call('PATCH', `/api/companies/${id}`, { body: { isActive: 'yes' } })).status).toBe(400);

    const partners = await h.call('GET', `/api/companies/${id}/technology-partners`);
    expect(partners.body).toEqual({ companyId: id, technologyPartnerCompanyIds: [SEED.partnerCompanyId] });
    const managed = await h.call('GET', `/api/companies/${SEED.partnerCompanyId}/managed-companies`);
    expect(managed.body.managedCompanyIds).toEqual(expect.arrayContaining([M, id]));

    expect((await h.call('DELETE', `/api/companies/${id}`)).body).toEqual({ success: true });
    expect((await h.call('GET', `/api/companies/${id}`)).status).toBe(404);
    expect((await h.call('DELETE', `/api/companies/${SEED.partnerCompanyId}`)).status).toBe(403);
  });

  it('lists list items (role, no isTechnologyPartner) filtered by role, and rejects an unknown role', async () => {
    const all = await h.call('GET', '/api/companies');
    expect(all.status).toBe(200);
    expect(all.body.cursor).toBeUndefined();
    expect(all.body.items.map((c: { id: string }) => c.id)).not.toContain(SEED.otherCompanyId);
    for (const item of all.body.items) {
      expect(item).toHaveProperty('role');
      expect(item).not.toHaveProperty('isTechnologyPartner');
    }
    const partners = await h.call('GET', '/api/companies?role=TECHNOLOGY_PARTNER');
    expect(partners.body.items.map((c: { id: string }) => c.id)).toEqual([SEED.partnerCompanyId]);
    expect((await h.call('GET', '/api/companies?role=BOSS')).status).toBe(400);
  });

  it('pages with an opaque cursor to the end, and rejects a cursor it did not issue', async () => {
    for (let i = 0; i < 3; i++) {
      await h.call('POST', '/api/companies', { body: { ...companyBody(), erpId: `ERP-PAGE-${i}` } });
    }
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.call('GET', `/api/companies?maxItems=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      ids.push(...page.body.items.map((c: { id: string }) => c.id));
      cursor = page.body.cursor;
      pages++;
    } while (cursor);
    const all = await h.call('GET', '/api/companies');
    expect(ids).toEqual(all.body.items.map((c: { id: string }) => c.id));
    expect(pages).toBe(Math.ceil(ids.length / 2));
    expect((await h.call('GET', '/api/companies?cursor=bm9wZQ')).status).toBe(400);
  });
});

describe('departments and users', () => {
  it('creates, reads, updates and deletes a department of a managed company', async () => {
    const created = await h.call('POST', `/api/company/${M}/departments`, { body: departmentBody(M) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...departmentBody(M), lastModifiedBy: 'Partner.API' });
    const id = created.body.id as string;
    expect((await h.call('GET', `/api/company/${M}/departments/${id}`)).body.id).toBe(id);
    const patched = await h.call('PATCH', `/api/company/${M}/departments/${id}`, {
      body: { name: 'Sales BE' },
    });
    expect(patched.body).toMatchObject({ name: 'Sales BE', erpId: 'ERP-DEP-B' });
    expect((await h.call('DELETE', `/api/company/${M}/departments/${id}`)).body).toEqual({ success: true });
    expect((await h.call('GET', `/api/company/${M}/departments/${id}`)).status).toBe(404);
    // A department of another company is not found through this company's path.
    expect((await h.call('GET', `/api/company/${M}/departments/${SEED.partnerDepartmentId}`)).status).toBe(
      404,
    );
  });

  it('refuses a body whose companyId differs from the path', async () => {
    const answer = await h.call('POST', `/api/company/${M}/departments`, {
      body: departmentBody(SEED.partnerCompanyId),
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ field: 'companyId', message: `must be ${M}` }]);
  });

  it('creates a user with every response field, resets its password, updates and deletes it', async () => {
    const body = userBody(M, [SEED.managedDepartmentId]);
    const created = await h.call('POST', `/api/company/${M}/users`, { body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(body);
    for (const field of ['id', 'createdAt', 'lastModifiedAt']) expect(created.body).toHaveProperty(field);
    const id = created.body.id as string;
    const reset = await h.call('POST', `/api/company/${M}/users/${id}/reset-password`);
    expect(reset).toMatchObject({ status: 200, body: { success: true } });
    const patched = await h.call('PATCH', `/api/company/${M}/users/${id}`, { body: { enabled: false } });
    expect(patched.body).toMatchObject({ enabled: false, username: body.username });
    const badDep = await h.call('PATCH', `/api/company/${M}/users/${id}`, {
      body: { departments: ['dep_other_main'] },
    });
    expect(badDep.status).toBe(400);
    expect((await h.call('DELETE', `/api/company/${M}/users/${id}`)).body).toEqual({ success: true });
    expect((await h.call('POST', `/api/company/${M}/users/${id}/reset-password`)).status).toBe(404);
  });

  it('pages users with an object-typed cursor[after] and with the opaque cursor alike', async () => {
    const P = SEED.partnerCompanyId;
    const all = (await h.call('GET', `/api/company/${P}/users`)).body.items.map((u: { id: string }) => u.id);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const first = await h.call('GET', `/api/company/${P}/users?maxItems=1`);
    expect(first.body.items.map((u: { id: string }) => u.id)).toEqual([all[0]]);
    expect(typeof first.body.cursor).toBe('string');
    const byObject = await h.call('GET', `/api/company/${P}/users?maxItems=1&cursor%5Bafter%5D=${all[0]}`);
    const byOpaque = await h.call('GET', `/api/company/${P}/users?maxItems=1&cursor=${first.body.cursor}`);
    expect(byObject.body).toEqual(byOpaque.body);
    expect(byObject.body.items[0].id).toBe(all[1]);
    // Companies take the opaque form only.
    const companies = await h.call('GET', `/api/companies?maxItems=1&cursor%5Bafter%5D=${P}`);
    expect(companies.body.items[0].id).toBe(P);
    expect((await h.call('GET', `/api/company/${P}/users?cursor%5Bafter%5D=usr_nope`)).status).toBe(400);
  });

  it('fills the fields only Interface B sets for users made through Interface A', async () => {
    h.sandbox.ctx.store.insert(
      'user',
      {
        id: 'usr_from_a',
        companyId: M,
        username: 'a@managed.example',
        role: 'CLIENT_VIEWER',
        departments: [],
        firstName: 'A',
        lastName: 'User',
        preferredLanguage: 'FR',
        emailAddress: 'a@managed.example',
        enabled: true,
        hasQERDSMandate: false,
        createdAt: '2026-11-01T00:00:00.000Z',
        lastModifiedAt: '2026-11-01T00:00:00.000Z',
        lastModifiedBy: 'Partner.API',
      },
      { companyId: M },
    );
    const user = await h.call('GET', `/api/company/${M}/users/usr_from_a`);
    expect(user.body).toMatchObject({ hasMFALoginEnabled: false, modulesAccess: ['SERVICE_CONNECT'] });
  });
});
