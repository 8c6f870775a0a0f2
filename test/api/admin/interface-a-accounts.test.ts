import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient } from '../../../src/api/client.js';
import { silentLogger } from '../../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../../src/sandbox/index.js';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { address, addUsageEvents, companyBody } from '../../sandbox/admin/admin-harness.js';
import { caught } from '../support/caught.js';
import { collect } from '../support/collect.js';
import { sandboxClientOptions } from '../support/sandbox-client.js';

let dir: string;
let sandbox: RunningSandbox;
let client: DocexClient;
const M = SEED.managedCompanyId;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-a-accounts-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'state'), log: silentLogger() });
  client = new DocexClient(sandboxClientOptions(sandbox, { retry: { baseDelayMs: 5 } }));
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const department = { name: 'Ops', headAddress: address, hasSeparateInvoicing: false, isActive: true };

describe('Interface A account operations through DocexClient', () => {
  it('creates a managed company, lists managed companies to the end and updates one', async () => {
    const created = await client.companies.create(companyBody());
    expect(created).toMatchObject({ role: 'MANAGED_COMPANY', technologyPartnerId: SEED.partnerCompanyId });
    const all = await collect(client.companies.iterate({ pageSize: 1 }));
    expect(all.map((c) => c.id)).toEqual([M, SEED.secondManagedCompanyId, created.id]);
    expect((await client.companies.update(created.id, { isActive: false })).isActive).toBe(false);
    expect((await caught(client.companies.get(SEED.otherCompanyId))).code).toBe('DOCEX_API_403');
  });

  it('requires x-managed-company-id to create a department or user (400) and refuses an unmanaged one (403)', async () => {
    expect((await caught(client.departments.create(department))).code).toBe('DOCEX_API_400');
    const other = await caught(
      client.departments.create(department, { managedCompanyId: SEED.otherCompanyId }),
    );
    expect(other.code).toBe('DOCEX_API_403');
    const dep = await client.departments.create(department, { managedCompanyId: M });
    expect(dep).toMatchObject({ companyId: M, lastModifiedBy: 'Partner.API', erpId: expect.any(String) });
    const user = {
      username: 'ops@managed.example',
      role: 'CLIENT_OPERATOR' as const,
      departments: [dep.id],
      firstName: 'Oz',
      lastName: 'Ops',
      preferredLanguage: 'FR' as const,
      emailAddress: 'ops@managed.example',
      enabled: true,
      hasQERDSMandate: true,
    };
    expect((await caught(client.users.create(user))).code).toBe('DOCEX_API_400');
    const created = await client.users.create(user, { managedCompanyId: M });
    expect(created).toMatchObject({ companyId: M, hasMFALoginEnabled: false });
    // Reads on behalf of the managed company see its records; the partner's own list does not.
    const managedUsers = await collect(client.users.iterate({ pageSize: 1 }, { managedCompanyId: M }));
    expect(managedUsers.map((u) => u.id)).toContain(created.id);
    expect((await collect(client.users.iterate())).map((u) => u.id)).not.toContain(created.id);
    const patched = await client.departments.update(dep.id, { name: 'Ops 2' }, { managedCompanyId: M });
    expect(patched.name).toBe('Ops 2');
  });

  it('answers usage totals and details for the caller and for a managed company', async () => {
    addUsageEvents(sandbox, M, 3, '2026-07-01T08:00:00.000Z', SEED.managedDepartmentId);
    const range = { from: '2026-07-01T00:00:00.000Z', until: '2026-08-01T00:00:00.000Z' };
    const totals = await client.usage.get(range, { managedCompanyId: M });
    expect(totals.totals).toEqual([
      { channel: 'EASY_PRINT', unit: 'SENDING', count: 1 },
      { channel: 'EMAIL', unit: 'SENDING', count: 2 },
    ]);
    const events = await collect(client.usage.iterateDetails({ ...range, companyId: M, maxItems: 1 }));
    expect(events).toHaveLength(3);
    expect((await client.usage.details(range)).items).toEqual([]);
  });
});
