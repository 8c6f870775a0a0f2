import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, type AdminUserCreate } from '../../../src/api/admin/index.js';
import { silentLogger } from '../../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../../src/sandbox/index.js';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { addUsageEvents, companyBody, departmentBody, userBody } from '../../sandbox/admin/admin-harness.js';
import { caught } from '../support/caught.js';
import { collect } from '../support/collect.js';
import { sandboxAdminOptions } from '../support/sandbox-client.js';

let dir: string;
let sandbox: RunningSandbox;
let admin: AdminClient;
const P = SEED.partnerCompanyId;
const M = SEED.managedCompanyId;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-admin-client-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'state'), log: silentLogger() });
  // No client certificate anywhere: only the CA, the partner-admin client and the API key.
  admin = new AdminClient(sandboxAdminOptions(sandbox));
});

afterAll(async () => {
  await admin?.close();
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('AdminClient against the sandbox', () => {
  it('reads GET /api with a partner-admin token over server TLS only', async () => {
    expect(await admin.info()).toMatchObject({ version: '1.0' });
  });

  it('fails with DOCEX_AUTH_TOKEN when the admin secret is wrong', async () => {
    const wrong = new AdminClient(
      sandboxAdminOptions(sandbox, { clientSecret: 'wrong', retry: { maxAttempts: 1 } }),
    );
    try {
      const err = await caught(wrong.info());
      expect(err.code).toBe('DOCEX_AUTH_TOKEN');
      expect(err.message).not.toContain('wrong');
    } finally {
      await wrong.close();
    }
  });

  it('runs the company operations and pages companies to the end', async () => {
    const created = await admin.companies.create(companyBody());
    expect(created).toMatchObject({ name: 'Client via B', lastModifiedBy: 'Partner.API' });
    expect((await admin.companies.get(created.id)).erpId).toBe('ERP-B-1');
    expect((await admin.companies.update(created.id, { name: 'Renamed' })).name).toBe('Renamed');
    expect(await admin.companies.technologyPartners(created.id)).toEqual({
      companyId: created.id,
      technologyPartnerCompanyIds: [P],
    });
    expect((await admin.companies.managedCompanies(P)).managedCompanyIds).toContain(created.id);

    const first = await admin.companies.list({ maxItems: 1 });
    expect(first.items).toHaveLength(1);
    expect(first.nextCursor).toEqual(expect.any(String));
    const all = await collect(admin.companies.iterate({ maxItems: 1 }));
    expect(all.map((c) => c.id)).toEqual([P, M, SEED.secondManagedCompanyId, created.id]);
    expect((await collect(admin.companies.iterate({ role: 'MANAGED_COMPANY' }))).map((c) => c.id)).toEqual([
      M,
      SEED.secondManagedCompanyId,
      created.id,
    ]);

    expect(await admin.companies.delete(created.id)).toEqual({ success: true });
    expect((await caught(admin.companies.get(created.id))).code).toBe('DOCEX_API_404');
    expect((await caught(admin.companies.get(SEED.otherCompanyId))).code).toBe('DOCEX_API_403');
  });

  it('runs the department and user operations, reset-password included, and pages them', async () => {
    const dep = await admin.departments.create(M, departmentBody(M));
    expect(await admin.departments.get(M, dep.id)).toMatchObject({ companyId: M, erpId: 'ERP-DEP-B' });
    expect((await admin.departments.update(M, dep.id, { isActive: false })).isActive).toBe(false);
    const user = await admin.users.create(M, userBody(M, [dep.id]) as AdminUserCreate);
    expect(user).toMatchObject({ role: 'SUPER_USER', modulesAccess: ['SERVICE_CONNECT', 'OMNI'] });
    expect(await admin.users.resetPassword(M, user.id)).toEqual({ success: true });
    expect((await admin.users.update(M, user.id, { firstName: 'Nina' })).firstName).toBe('Nina');
    expect((await admin.users.get(M, user.id)).firstName).toBe('Nina');

    const deps = await collect(admin.departments.iterate(M, { maxItems: 1 }));
    expect(deps.map((d) => d.id)).toEqual([SEED.managedDepartmentId, dep.id]);
    const users = await collect(admin.users.iterate(M, { maxItems: 1 }));
    expect(users.map((u) => u.id)).toEqual(['usr_managed_admin', user.id]);

    expect(await admin.users.delete(M, user.id)).toEqual({ success: true });
    expect(await admin.departments.delete(M, dep.id)).toEqual({ success: true });
    const missing = await caught(admin.users.create(M, { ...userBody(M, []), role: undefined } as never));
    expect(missing.code).toBe('DOCEX_API_400');
    expect(missing.problem?.errors).toEqual([expect.objectContaining({ field: 'role' })]);
  });

  it('creates, reads, searches, downloads and deletes a report', async () => {
    const events = addUsageEvents(sandbox, M, 3, '2026-09-01T08:00:00.000Z');
    const created = await admin.reports.create(M, {
      companyId: M,
      reportType: 'USAGE',
      from: '2026-09-01T00:00:00.000Z',
      until: '2026-10-01T00:00:00.000Z',
    });
    expect(await admin.reports.get(M, created.id)).toMatchObject({ status: 'READY', reportType: 'USAGE' });
    expect((await admin.reports.search(M, { reportType: 'USAGE' })).map((r) => r.id)).toEqual([created.id]);
    const url = await admin.reports.downloadUrl(M, created.id);
    const files = new Agent({ connect: { ca: sandbox.credentials.caCertPem } });
    try {
      const csv = await (await request(url, { dispatcher: files })).body.text();
      expect(
        csv
          .trimEnd()
          .split('\r\n')
          .slice(1)
          .map((l) => l.split(',')[0]),
      ).toEqual(events);
    } finally {
      await files.close();
    }
    expect(await admin.reports.delete(M, created.id)).toEqual({ success: true });
    expect((await caught(admin.reports.get(M, created.id))).code).toBe('DOCEX_API_404');
  });

  it('creates and deletes a news item', async () => {
    const item = await admin.news.create({ title: 'New channel', body: 'Peppol is live', language: 'NL' });
    expect(item).toMatchObject({ title: 'New channel', language: 'NL', id: expect.any(String) });
    expect(await admin.news.delete(item.id)).toEqual({ success: true });
    expect((await caught(admin.news.delete(item.id))).code).toBe('DOCEX_API_404');
  });

  it('scrolls usage details by nextCursor to the end and surfaces the 400s', async () => {
    const ids = addUsageEvents(sandbox, P, 5, '2026-08-01T08:00:00.000Z');
    const range = { from: new Date('2026-08-01T00:00:00Z'), until: '2026-09-01T00:00:00.000Z' };
    const page = await admin.usage.details({ ...range, maxItems: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.nextCursor).toEqual(expect.any(String));
    const all = await collect(admin.usage.iterateDetails({ ...range, companyId: P, maxItems: 2 }));
    expect(all.map((e) => e.id)).toEqual(ids);
    const reversed = await caught(admin.usage.details({ from: range.until, until: range.from }));
    expect(reversed.code).toBe('DOCEX_API_400');
    expect((await caught(admin.usage.details({ ...range, maxItems: 5000 }))).code).toBe('DOCEX_API_400');
    expect((await caught(admin.usage.details({ ...range, cursor: 'bm9wZQ' }))).code).toBe('DOCEX_API_400');
  });
});
