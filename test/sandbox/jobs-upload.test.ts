import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinalSendingEvent, jobSchema, sendingEventSchema } from '../../src/domain/wire.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const W = SEED.workflows;
const samplePdf = readFileSync(new URL('../../samples/pdf-email/invoice-2026-0001.pdf', import.meta.url));
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ maxUploadBytes: 256 * 1024 });
});
afterAll(async () => {
  await t?.stop();
});

async function createJob(workflowId: string, filename: string) {
  const res = await t.api('POST', '/jobs/single-file', { body: { workflowId, filename } });
  expect(res.status).toBe(201);
  return res.body as { id: string; fileUploadUrl: string; uploadExpiresAt: string };
}

async function finalEvents(jobId: string, count: number) {
  return until(async () => {
    await t.advance(60_000);
    const res = await t.api('GET', `/sending-events?jobId=${jobId}`);
    const items = res.body.items as { status: string; businessStatus: string }[];
    return items.length === count && items.every(isFinalSendingEvent) ? res.body.items : undefined;
  });
}

describe('single-file job, upload and lifecycle', () => {
  it('creates a job, takes the PUT with an MD5 ETag, and runs its event to SUCCESS with a readable proof', async () => {
    const job = await createJob(W.pdfEmail, 'invoice-2026-0001.pdf');
    expect(job.fileUploadUrl).toMatch(/\/upload\/job_.*expires=\d+&signature=[0-9a-f]{64}$/);
    const before = await t.api('GET', `/jobs/${job.id}`);
    expect(before.body.status).toBe('AWAITING_FILE_UPLOAD');
    expect(jobSchema.safeParse(before.body).success).toBe(true);

    const put = await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    await t.sandbox.settle();
    expect(put.status).toBe(200);
    expect(put.headers['etag']).toBe(`"${md5(samplePdf)}"`);

    const processing = await t.api('GET', `/jobs/${job.id}`);
    expect(processing.body).toMatchObject({ status: 'PROCESSING', sendingEventCount: 1 });
    expect(processing.body.uploadExpiresAt).toBeUndefined();

    const [event] = await finalEvents(job.id, 1);
    expect(sendingEventSchema.safeParse(event).success).toBe(true);
    expect(event).toMatchObject({
      businessStatus: 'SUCCESS',
      status: 'SUCCESS',
      jobId: job.id,
      workflowId: W.pdfEmail,
      sendingSourceFileReference: 'invoice-2026-0001.pdf',
      resendOf: null,
    });
    expect(event.taskDetails).toEqual([expect.objectContaining({ taskType: 'EMAIL', status: 'SUCCESS' })]);
    expect(event.documents.map((d: { type: string }) => d.type).sort()).toEqual([
      'DELIVERY_PROOF',
      'ORIGINAL',
      'SUBMISSION_REPORT',
    ]);
    expect(event.properties).toContainEqual({ name: 'recipient', value: 'jane.doe@example.com' });

    const completed = await t.api('GET', `/jobs/${job.id}`);
    expect(completed.body.status).toBe('COMPLETED');

    const proof = event.documents.find((d: { type: string }) => d.type === 'DELIVERY_PROOF');
    const link = await t.api('GET', `/sending-events/${event.id}/files/${proof.fileReference}/download-url`);
    expect(link.status).toBe(200);
    expect(Date.parse(link.body.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
    const file = await t.files('GET', link.body.url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(Number(file.headers['content-length'])).toBe(file.raw.length);
    const pdf = await PDFDocument.load(file.raw);
    expect(pdf.getSubject()).toContain(event.id);

    const original = event.documents.find((d: { type: string }) => d.type === 'ORIGINAL');
    const originalLink = await t.api(
      'GET',
      `/sending-events/${event.id}/files/${original.fileReference}/download-url`,
    );
    expect(md5((await t.files('GET', originalLink.body.url)).raw)).toBe(md5(samplePdf));

    const usage = t.sandbox.ctx.store.list('usage-event', { companyId: SEED.partnerCompanyId });
    expect(usage).toContainEqual(
      expect.objectContaining({ sendingEventId: event.id, channel: 'EMAIL', unit: 'SENDING', quantity: 1 }),
    );
  });

  it('answers 409 to a second upload to the same job', async () => {
    const job = await createJob(W.pdfEmail, 'twice.pdf');
    expect((await t.files('PUT', job.fileUploadUrl, { body: samplePdf })).status).toBe(200);
    const again = await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    expect(again.status).toBe(409);
    expect(again.headers['content-type']).toBe('application/problem+json');
  });

  it('answers 403 to a tampered signature and leaves the job awaiting', async () => {
    const job = await createJob(W.pdfEmail, 'tampered.pdf');
    const bad = job.fileUploadUrl.replace(
      /signature=(.)/,
      (_m, c: string) => `signature=${c === 'a' ? 'b' : 'a'}`,
    );
    expect((await t.files('PUT', bad, { body: samplePdf })).status).toBe(403);
    expect((await t.api('GET', `/jobs/${job.id}`)).body.status).toBe('AWAITING_FILE_UPLOAD');
  });

  it('answers 413 to an upload over the size limit, from its Content-Length', async () => {
    const job = await createJob(W.pdfEmail, 'big.pdf');
    const big = Buffer.alloc(300 * 1024, 1);
    expect((await t.files('PUT', job.fileUploadUrl, { body: big })).status).toBe(413);
    expect((await t.api('GET', `/jobs/${job.id}`)).body.status).toBe('AWAITING_FILE_UPLOAD');
  });

  it('fails a job whose file is not a PDF, with an errorList entry and no events', async () => {
    const job = await createJob(W.pdfEmail, 'not-really.pdf');
    expect((await t.files('PUT', job.fileUploadUrl, { body: 'hello, not a pdf' })).status).toBe(200);
    await t.sandbox.settle();
    const res = await t.api('GET', `/jobs/${job.id}`);
    expect(res.body.status).toBe('FAILED');
    expect(res.body.errorList[0].message).toMatch(/not a PDF/);
    expect((await t.api('GET', `/sending-events?jobId=${job.id}`)).body.totalItems).toBe(0);
  });
});

describe('what an uploaded file becomes', () => {
  it('makes one event per PDF of a ZIP, named by entry path', async () => {
    const job = await createJob(W.pdfEmail, 'batch.zip');
    const zip = readFileSync(new URL('../../samples/pdf-email/invoices-2026-batch.zip', import.meta.url));
    expect((await t.files('PUT', job.fileUploadUrl, { body: zip })).status).toBe(200);
    await t.sandbox.settle();
    const events = await finalEvents(job.id, 3);
    expect(events.map((e: { sendingSourceFileReference: string }) => e.sendingSourceFileReference)).toEqual([
      'invoices/invoice-2026-0002.pdf',
      'invoices/invoice-2026-0003.pdf',
      'invoices/invoice-2026-0004.pdf',
    ]);
  });

  it('makes one event per CSV data row and one per UBL document', async () => {
    const csvJob = await createJob(W.dataFile, 'customers.csv');
    const csv = readFileSync(new URL('../../samples/data-file/customers.csv', import.meta.url));
    expect((await t.files('PUT', csvJob.fileUploadUrl, { body: csv })).status).toBe(200);
    await t.sandbox.settle();
    expect((await t.api('GET', `/jobs/${csvJob.id}`)).body.sendingEventCount).toBe(3);

    const ublJob = await createJob(W.ubl, 'invoice.xml');
    const ubl = readFileSync(new URL('../../samples/ubl/invoice-base-example.xml', import.meta.url));
    expect((await t.files('PUT', ublJob.fileUploadUrl, { body: ubl })).status).toBe(200);
    await t.sandbox.settle();
    const [event] = await finalEvents(ublJob.id, 1);
    expect(event.taskDetails[0].taskType).toBe('PEPPOL');
  });

  it('chooses the outcome from the content, or from the control API when forced', async () => {
    const payload = (email: string) => ({
      workflowId: W.payloadWordEmail,
      jobName: `letter to ${email}`,
      filename: 'letter.docx',
      payload: {
        channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: email }],
        extraInfoIdentifiers: [],
        templateData: { name: 'x' },
      },
    });
    const reject = await t.api('POST', '/jobs/payload-word', { body: payload('reject@example.com') });
    const failing = await t.api('POST', '/jobs/payload-word', { body: payload('fail@example.com') });
    const forced = await t.api('POST', '/jobs/payload-word', { body: payload('ok@example.com') });
    expect([reject.status, failing.status, forced.status]).toEqual([201, 201, 201]);
    const forcedEvent = (await t.api('GET', `/sending-events?jobId=${forced.body.id}`)).body.items[0];
    expect(forcedEvent.businessStatus).toBe('NOT_STARTED');
    const force = await t.control('POST', `/sending-events/${forcedEvent.id}/outcome`, {
      businessStatus: 'FAILURE',
    });
    expect(force.status).toBe(200);

    expect((await finalEvents(reject.body.id, 1))[0]).toMatchObject({
      businessStatus: 'REJECTED',
      status: 'FAILURE',
    });
    expect((await finalEvents(failing.body.id, 1))[0]).toMatchObject({
      businessStatus: 'FAILURE',
      status: 'FAILURE',
    });
    const forcedFinal = (await finalEvents(forced.body.id, 1))[0];
    expect(forcedFinal).toMatchObject({ businessStatus: 'FAILURE' });
    expect(forcedFinal.errorList[0].code).toBe('DELIVERY_FAILED');
    expect(forcedFinal.documents.map((d: { type: string }) => d.type)).toEqual([
      'ORIGINAL',
      'SUBMISSION_REPORT',
    ]);
  });
});

describe('job creation rules', () => {
  it('answers 400 for a disabled or unvalidated workflow and for a file type the workflow does not take', async () => {
    for (const [workflowId, filename] of [
      [W.disabled, 'a.pdf'],
      [W.notValidated, 'a.pdf'],
      [W.pdfEmail, 'a.csv'],
      [W.payloadWordEmail, 'a.pdf'],
    ] as const) {
      const res = await t.api('POST', '/jobs/single-file', { body: { workflowId, filename } });
      expect(res.status, `${workflowId} ${filename}`).toBe(400);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('answers 404 to an unknown workflow and 403 to another company’s workflow', async () => {
    expect(
      (await t.api('POST', '/jobs/single-file', { body: { workflowId: 'wf_nope', filename: 'a.pdf' } }))
        .status,
    ).toBe(404);
    const managed = { workflowId: W.managedPdfEmail, filename: 'a.pdf' };
    expect((await t.api('POST', '/jobs/single-file', { body: managed })).status).toBe(403);
    const onBehalf = await t.api('POST', '/jobs/single-file', {
      body: managed,
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(onBehalf.status).toBe(201);
    expect((await t.api('GET', `/jobs/${onBehalf.body.id}`)).status).toBe(404);
  });

  it('answers 415 to payload-pdf with a .txt filename and 201 with an upload URL for a .pdf', async () => {
    const body = JSON.parse(
      readFileSync(
        new URL('../../samples/payload-pdf-print/letter-with-payment.json', import.meta.url),
        'utf8',
      ),
    );
    const txt = await t.api('POST', '/jobs/payload-pdf', { body: { ...body, filename: 'letter.txt' } });
    expect(txt.status).toBe(415);
    const ok = await t.api('POST', '/jobs/payload-pdf', { body });
    expect(ok.status).toBe(201);
    expect(ok.body.fileUploadUrl).toContain(`/upload/${ok.body.id}`);
    const pdf = readFileSync(
      new URL('../../samples/payload-pdf-print/letter-with-payment.pdf', import.meta.url),
    );
    expect((await t.files('PUT', ok.body.fileUploadUrl, { body: pdf })).status).toBe(200);
    const [event] = await finalEvents(ok.body.id, 1);
    expect(event.extraInfo).toEqual([{ name: 'customerId', value: 'C001' }]);
  });

  it('answers 400 with field errors when payload rules fail', async () => {
    const res = await t.api('POST', '/jobs/payload-word', {
      body: {
        workflowId: W.payloadWordEmail,
        jobName: 'x',
        filename: 'x.docx',
        payload: { channelIdentifiers: [], extraInfoIdentifiers: [], templateData: {} },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.length).toBeGreaterThan(0);
  });
});

describe('upload window', () => {
  it('refuses the upload URL after the window (403) and deletes the job (404)', async () => {
    const job = await createJob(W.pdfEmail, 'late.pdf');
    await t.advance(2 * 3600_000 + 1000);
    expect((await t.files('PUT', job.fileUploadUrl, { body: samplePdf })).status).toBe(403);
    expect((await t.api('GET', `/jobs/${job.id}`)).status).toBe(404);
  });
});
