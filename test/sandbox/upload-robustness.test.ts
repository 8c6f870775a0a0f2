import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox } from './sandbox-harness.js';

const samplePdf = readFileSync(new URL('../../samples/pdf-email/invoice-2026-0001.pdf', import.meta.url));
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => {
  await t?.stop();
});

async function newJob(filename: string) {
  const res = await t.api('POST', '/jobs/single-file', {
    body: { workflowId: SEED.workflows.pdfEmail, filename },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; fileUploadUrl: string };
}

const blobDir = () => path.join(t.stateDir, 'blobs');
const partFiles = () => readdirSync(blobDir()).filter((f) => f.endsWith('.part'));

describe('upload answer and processing', () => {
  it('answers 200 with the ETag before any sending event exists, and a restart finishes the processing', async () => {
    // Processing held back: the state is exactly that of a crash right after the answer.
    await t.control('POST', '/faults', { route: '/upload/:jobId', processingDelayMs: 600_000 });
    const job = await newJob('crash.pdf');
    const put = await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    expect(put.status).toBe(200);
    expect(put.headers['etag']).toBe(`"${md5(samplePdf)}"`);
    const answered = await t.api('GET', `/jobs/${job.id}`);
    expect(answered.body).toMatchObject({ status: 'PROCESSING', sendingEventCount: 0 });
    expect((await t.api('GET', `/sending-events?jobId=${job.id}`)).body.totalItems).toBe(0);

    const stopping = Date.now();
    await t.stop({ keepState: true });
    expect(Date.now() - stopping).toBeLessThan(3_000);
    t = await startTestSandbox({ stateDir: t.stateDir });
    await t.sandbox.settle();

    const resumed = await t.api('GET', `/jobs/${job.id}`);
    expect(resumed.body).toMatchObject({ status: 'PROCESSING', sendingEventCount: 1 });
    const events = await t.api('GET', `/sending-events?jobId=${job.id}`);
    expect(events.body.items.map((e: { properties: unknown[] }) => e.properties)).toEqual([
      [{ name: 'recipient', value: 'jane.doe@example.com' }],
    ]);
    // A second restart finds the events and does not make them again.
    await t.stop({ keepState: true });
    t = await startTestSandbox({ stateDir: t.stateDir });
    await t.sandbox.settle();
    expect((await t.api('GET', `/sending-events?jobId=${job.id}`)).body.totalItems).toBe(1);
  });

  it('fails the job with an errorList entry when processing throws, instead of leaving it PROCESSING', async () => {
    const store = t.sandbox.ctx.store;
    const workflow = store.get('workflow', SEED.workflows.pdfEmail);
    expect(workflow).toBeDefined();
    const job = await newJob('broken-workflow.pdf');
    // A workflow record without its task list makes event creation throw.
    store.put('workflow', { ...workflow, id: SEED.workflows.pdfEmail, tasks: null });
    try {
      expect((await t.files('PUT', job.fileUploadUrl, { body: samplePdf })).status).toBe(200);
      await t.sandbox.settle();
    } finally {
      store.put('workflow', { ...workflow, id: SEED.workflows.pdfEmail });
    }
    const failed = await t.api('GET', `/jobs/${job.id}`);
    expect(failed.body).toMatchObject({
      status: 'FAILED',
      sendingEventCount: 0,
      errorList: [{ code: 'PROCESSING_FAILED', message: 'the uploaded file could not be processed' }],
    });
    expect((await t.api('GET', `/sending-events?jobId=${job.id}`)).body.totalItems).toBe(0);
  });

  it('answers 411 to an upload without a Content-Length and keeps the job awaiting its file', async () => {
    const job = await newJob('chunked.pdf');
    async function* chunks() {
      yield samplePdf.subarray(0, 100);
      yield samplePdf.subarray(100);
    }
    const res = await request(job.fileUploadUrl, {
      method: 'PUT',
      body: Readable.from(chunks()),
      dispatcher: t.plain,
    });
    expect(res.statusCode).toBe(411);
    expect(res.headers['content-type']).toBe('application/problem+json');
    await res.body.dump();
    expect((await t.api('GET', `/jobs/${job.id}`)).body.status).toBe('AWAITING_FILE_UPLOAD');
  });

  it('answers 500 when the file cannot be written, keeps running, leaves no temporary file, and takes a retry', async () => {
    const job = await newJob('disk-trouble.pdf');
    // A file where the blob folder should be: every write under it fails (ENOTDIR), even as root.
    const aside = `${blobDir()}.aside`;
    renameSync(blobDir(), aside);
    writeFileSync(blobDir(), 'not a folder');
    let failed: Awaited<ReturnType<TestSandbox['files']>>;
    try {
      failed = await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    } finally {
      rmSync(blobDir());
      renameSync(aside, blobDir());
    }
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ status: 500, detail: 'the upload could not be stored' });
    expect(partFiles()).toEqual([]);
    expect((await t.api('GET', `/jobs/${job.id}`)).body.status).toBe('AWAITING_FILE_UPLOAD');

    const retry = await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    expect(retry.status).toBe(200);
    await t.sandbox.settle();
    expect((await t.api('GET', `/jobs/${job.id}`)).body.sendingEventCount).toBe(1);
  });
});
