/**
 * The partner's two managed companies (real sandbox over mTLS): each takes jobs on its own
 * workflow as the partner acting for it (x-managed-company-id), and what one company's job made
 * (the job, its name in GET /jobs, its sending events, their proofs) is not found as the other
 * company nor as the partner itself; the control API records the company of every job.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinalSendingEvent } from '../../src/domain/wire.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const W = SEED.workflows;
const pdf = readFileSync(new URL('../../samples/managed-pdf-email/statement-2026-11.pdf', import.meta.url));
const as = (companyId: string) => ({ 'x-managed-company-id': companyId });
const FIRST = as(SEED.managedCompanyId);
const SECOND = as(SEED.secondManagedCompanyId);

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => {
  await t?.stop();
});

/** A single-file job on `workflowId` as the company of `headers`, uploaded and followed to a final event. */
async function finishedJob(workflowId: string, jobName: string, headers: Record<string, string>) {
  const created = await t.api('POST', '/jobs/single-file', {
    body: { workflowId, filename: 'statement-2026-11.pdf', jobName },
    headers,
  });
  expect(created.status).toBe(201);
  expect((await t.files('PUT', created.body.fileUploadUrl, { body: pdf })).status).toBe(200);
  const event = await until(async () => {
    await t.advance(60_000);
    const list = await t.api('GET', `/sending-events?jobId=${created.body.id}`, { headers });
    const first = list.body.items?.[0];
    return first && isFinalSendingEvent(first) ? first : undefined;
  });
  return { jobId: created.body.id as string, event };
}

describe('two managed companies of one partner', () => {
  it('lets the partner act for both, each on its own workflow only', async () => {
    const companies = await t.api('GET', '/companies');
    expect(companies.body.items.map((c: { id: string }) => c.id).sort()).toEqual(
      [SEED.managedCompanyId, SEED.secondManagedCompanyId].sort(),
    );
    expect(
      (await t.api('GET', `/workflows/${W.secondManagedPdfEmail}`, { headers: SECOND })).body,
    ).toMatchObject({
      companyId: SEED.secondManagedCompanyId,
      departmentId: SEED.secondManagedDepartmentId,
      validated: true,
    });
    const listed = await t.api('GET', '/workflows', { headers: SECOND });
    expect(listed.body.items.map((w: { id: string }) => w.id)).toEqual([W.secondManagedPdfEmail]);
    for (const [workflowId, headers] of [
      [W.managedPdfEmail, SECOND],
      [W.secondManagedPdfEmail, FIRST],
      [W.secondManagedPdfEmail, {}],
    ] as const) {
      const res = await t.api('POST', '/jobs/single-file', {
        body: { workflowId, filename: 'a.pdf' },
        headers,
      });
      expect(res.status, `${workflowId} as ${JSON.stringify(headers)}`).toBe(403);
      expect(res.body.detail).toBe(`workflow ${workflowId} belongs to another company`);
    }
  });

  it("keeps each company's job, its name, its sending events and their proofs from the other company and the partner", async () => {
    const name = 'statement November';
    const first = await finishedJob(W.managedPdfEmail, name, FIRST);
    const second = await finishedJob(W.secondManagedPdfEmail, name, SECOND);
    expect(first.event.businessStatus).toBe('SUCCESS');
    expect(second.event.businessStatus).toBe('SUCCESS');

    for (const [own, job, others] of [
      [FIRST, first, [SECOND, {}]],
      [SECOND, second, [FIRST, {}]],
    ] as const) {
      const proof = job.event.documents.find((d: { type: string }) => d.type === 'DELIVERY_PROOF');
      const proofUrl = `/sending-events/${job.event.id}/files/${proof.fileReference}/download-url`;
      // The company that made it reads everything...
      expect((await t.api('GET', `/jobs/${job.jobId}`, { headers: own })).status).toBe(200);
      const byName = (await t.api('GET', '/jobs', { headers: own })).body.items.filter(
        (j: { name: string }) => j.name === name,
      );
      expect(byName.map((j: { id: string }) => j.id)).toEqual([job.jobId]);
      expect((await t.api('GET', proofUrl, { headers: own })).status).toBe(200);
      // ...and nobody else finds it: not the job, not its name, not its events, not its proof.
      for (const headers of others) {
        const who = JSON.stringify(headers);
        expect((await t.api('GET', `/jobs/${job.jobId}`, { headers })).status, who).toBe(404);
        const jobs = await t.api('GET', '/jobs', { headers });
        expect(
          jobs.body.items.filter((j: { id: string }) => j.id === job.jobId),
          who,
        ).toEqual([]);
        const events = await t.api('GET', `/sending-events?jobId=${job.jobId}`, { headers });
        expect(events.body, who).toEqual({ items: [], totalItems: 0 });
        expect((await t.api('GET', `/sending-events/${job.event.id}`, { headers })).status, who).toBe(404);
        expect((await t.api('GET', proofUrl, { headers })).status, who).toBe(404);
        expect((await t.api('POST', `/sending-events/${job.event.id}/resend`, { headers })).status, who).toBe(
          404,
        );
      }
    }

    const recorded = (await t.control('GET', '/jobs')).body.items as {
      id: string;
      companyId: string;
      workflowId: string;
    }[];
    expect(recorded.filter((j) => j.id === first.jobId || j.id === second.jobId)).toEqual([
      expect.objectContaining({
        id: first.jobId,
        companyId: SEED.managedCompanyId,
        workflowId: W.managedPdfEmail,
      }),
      expect.objectContaining({
        id: second.jobId,
        companyId: SEED.secondManagedCompanyId,
        workflowId: W.secondManagedPdfEmail,
      }),
    ]);
  });
});
