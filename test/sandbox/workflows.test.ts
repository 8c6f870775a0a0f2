import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowSchema } from '../../src/domain/wire.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, startHarness } from './webhooks-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

const partnerWorkflowIds = Object.values(SEED.workflows).filter(
  (id) => id !== SEED.workflows.managedPdfEmail && id !== SEED.workflows.secondManagedPdfEmail,
);

describe('GET /workflows', () => {
  it('lists every seeded workflow of the partner company, and only those', async () => {
    const res = await h.call('GET', '/workflows');
    expect(res.status).toBe(200);
    expect(res.body.totalItems).toBe(partnerWorkflowIds.length);
    expect(res.body.items.map((w: { id: string }) => w.id).sort()).toEqual([...partnerWorkflowIds].sort());
    for (const item of res.body.items) expect(workflowSchema.safeParse(item).success).toBe(true);
  });

  it('pages with after and maxItems', async () => {
    const first = await h.call('GET', '/workflows?maxItems=5');
    expect(first.body.items).toHaveLength(5);
    expect(first.body.totalItems).toBe(partnerWorkflowIds.length);
    const last = first.body.items[4].id;
    const second = await h.call('GET', `/workflows?maxItems=5&after=${last}`);
    expect(second.body.items).toHaveLength(5);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
    const ids = [...first.body.items, ...second.body.items].map((w: { id: string }) => w.id);
    expect(new Set(ids).size).toBe(10);
  });

  it('answers 400 for an unknown after and for a maxItems out of range', async () => {
    expect((await h.call('GET', '/workflows?after=wf_nope')).status).toBe(400);
    expect((await h.call('GET', '/workflows?maxItems=0')).status).toBe(400);
    expect((await h.call('GET', '/workflows?maxItems=1001')).status).toBe(400);
  });

  it("lists the managed company's workflows when acting for it", async () => {
    const res = await h.call('GET', '/workflows', {
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(res.status).toBe(200);
    expect(res.body.items.map((w: { id: string }) => w.id)).toEqual([SEED.workflows.managedPdfEmail]);
  });
});

describe('GET /workflows/{id}', () => {
  it('answers the full workflow record', async () => {
    const res = await h.call('GET', `/workflows/${SEED.workflows.payloadPdfPrint}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: SEED.workflows.payloadPdfPrint,
      trigger: { type: 'FILE_DROP', secondsToWait: 30 },
      tasks: [{ type: 'EASY_PRINT', order: 1 }],
      inputSource: { type: 'PAYLOAD_PDF' },
      enabled: true,
      validated: true,
      requiresApproval: false,
      hasPom: true,
      companyId: SEED.partnerCompanyId,
      departmentId: SEED.partnerDepartmentId,
      version: 1,
      lastModifiedBy: 'Partner.API',
    });
    expect(res.body.pom).toBeDefined();
    expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('carries the flags the seed comments promise', async () => {
    const get = async (id: string) => (await h.call('GET', `/workflows/${id}`)).body;
    expect((await get(SEED.workflows.notValidated)).validated).toBe(false);
    expect((await get(SEED.workflows.disabled)).enabled).toBe(false);
    expect((await get(SEED.workflows.payloadWordDocportal)).invoiceConfiguration).toMatchObject({
      enableInvoiceTracking: true,
    });
    expect((await get(SEED.workflows.pdfRegistered)).tasks).toEqual([
      { type: 'ERDS', order: 1 },
      { type: 'QERDS', order: 2 },
    ]);
    expect((await get(SEED.workflows.ubl)).inputSource.type).toBe('UBL');
    expect((await get(SEED.workflows.dataFile)).inputSource.type).toBe('DATA_FILE');
  });

  it("answers 404 for an unknown id and 403 for another company's workflow", async () => {
    const unknown = await h.call('GET', '/workflows/wf_nope');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
    expect((await h.call('GET', `/workflows/${SEED.workflows.managedPdfEmail}`)).status).toBe(403);
  });
});
