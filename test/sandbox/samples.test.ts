import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox } from './sandbox-harness.js';

const W = SEED.workflows;
const sample = (rel: string) => readFileSync(new URL(`../../samples/${rel}`, import.meta.url));

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => {
  await t?.stop();
});

describe('samples', () => {
  it.each([
    [W.pdfEmail, 'pdf-email/invoice-2026-0001.pdf', 1],
    [W.pdfEmail, 'pdf-email/invoices-2026-batch.zip', 3],
    [W.pdfPrint, 'pdf-print/letter-2026-0001.pdf', 1],
    [W.pdfRegistered, 'pdf-registered/notice-2026-0001.pdf', 1],
    [W.dataFile, 'data-file/customers.csv', 3],
    [W.dataFile, 'data-file/customers.xml', 2],
    [W.ubl, 'ubl/invoice-base-example.xml', 1],
  ])('workflow %s takes %s and makes %i sending events', async (workflowId, rel, events) => {
    const filename = rel.split('/').at(-1) ?? rel;
    const job = await t.api('POST', '/jobs/single-file', { body: { workflowId, filename } });
    expect(job.status).toBe(201);
    expect((await t.files('PUT', job.body.fileUploadUrl, { body: sample(rel) })).status).toBe(200);
    await t.sandbox.settle();
    const res = await t.api('GET', `/jobs/${job.body.id}`);
    expect(res.body).toMatchObject({ status: 'PROCESSING', sendingEventCount: events });
  });

  it('the managed company sample goes through its workflow on behalf of the managed company', async () => {
    const headers = { 'x-managed-company-id': SEED.managedCompanyId };
    const job = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: W.managedPdfEmail, filename: 'statement-2026-11.pdf' },
      headers,
    });
    expect(job.status).toBe(201);
    expect(
      (
        await t.files('PUT', job.body.fileUploadUrl, {
          body: sample('managed-pdf-email/statement-2026-11.pdf'),
        })
      ).status,
    ).toBe(200);
  });

  it('every payload-word sample request passes the payload rules of its workflow', async () => {
    const files = readdirSync(new URL('../../samples/payload-word/', import.meta.url)).filter((f) =>
      f.endsWith('.json'),
    );
    expect(files.length).toBe(5);
    for (const f of files) {
      const res = await t.api('POST', '/jobs/payload-word', {
        body: JSON.parse(sample(`payload-word/${f}`).toString()),
      });
      expect(res.status, `${f}: ${JSON.stringify(res.body)}`).toBe(201);
    }
  });
});
