import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
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

const newJob = async (filename: string) =>
  (await t.api('POST', '/jobs/single-file', { body: { workflowId: SEED.workflows.pdfEmail, filename } }))
    .body as {
    id: string;
    fileUploadUrl: string;
  };

describe('faults', () => {
  it('fails every matching request at errorRate 1 with 503 until cleared, and leaves other routes alone', async () => {
    expect((await t.control('POST', '/faults', { route: '/jobs/:id', errorRate: 1 })).status).toBe(201);
    expect((await t.api('GET', '/jobs/job_x')).status).toBe(503);
    expect((await t.api('GET', '/jobs')).status).toBe(200);
    expect((await t.control('DELETE', '/faults')).status).toBe(200);
    expect((await t.api('GET', '/jobs/job_x')).status).toBe(404);
  });

  it('answers a burst of 429 with Retry-After, then recovers', async () => {
    await t.control('POST', '/faults', {
      route: '*',
      method: 'GET',
      burst429: { count: 2, retryAfterSeconds: 7 },
    });
    const first = await t.api('GET', '/jobs');
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('7');
    expect((await t.api('GET', '/jobs')).status).toBe(429);
    expect((await t.api('GET', '/jobs')).status).toBe(200);
    await t.control('DELETE', '/faults');
  });

  it('dropAnswer does the work, then cuts the connection before the answer (next N)', async () => {
    await t.control('POST', '/faults', { route: '/jobs/single-file', method: 'POST', dropAnswerNext: 1 });
    const before = ((await t.control('GET', '/jobs')).body.items as unknown[]).length;
    await expect(
      t.api('POST', '/jobs/single-file', {
        body: { workflowId: SEED.workflows.pdfEmail, filename: 'lost-answer.pdf', jobName: 'lost-answer' },
      }),
    ).rejects.toThrow();
    const jobs = (await t.control('GET', '/jobs')).body.items as { name: string }[];
    expect(jobs).toHaveLength(before + 1);
    expect(jobs.filter((j) => j.name === 'lost-answer')).toHaveLength(1);
    expect((await t.control('GET', '/state')).body.answersDropped).toBe(1);
    // Only the next one: the following create is answered.
    const ok = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: SEED.workflows.pdfEmail, filename: 'answered.pdf' },
    });
    expect(ok.status).toBe(201);
    await t.control('DELETE', '/faults');
  });

  it('fails exactly the next N requests with failNext and the given status', async () => {
    await t.control('POST', '/faults', { route: '/jobs/single-file', failNext: 1, status: 502 });
    const failed = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: SEED.workflows.pdfEmail, filename: 'a.pdf' },
    });
    expect(failed.status).toBe(502);
    const ok = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: SEED.workflows.pdfEmail, filename: 'a.pdf' },
    });
    expect(ok.status).toBe(201);
    await t.control('DELETE', '/faults');
  });

  it('resets the connection mid-upload without touching the job, and a later upload succeeds', async () => {
    const job = await newJob('reset.pdf');
    await t.control('POST', '/faults', { route: '/upload/:jobId', resetMidUploadRate: 1 });
    const body = Buffer.concat([samplePdf, Buffer.alloc(512 * 1024, 0x20)]);
    await expect(
      request(job.fileUploadUrl, { method: 'PUT', body, dispatcher: t.plain }).then((r) => r.body.dump()),
    ).rejects.toThrow();
    expect((await t.api('GET', `/jobs/${job.id}`)).body.status).toBe('AWAITING_FILE_UPLOAD');
    await t.control('DELETE', '/faults');
    const put = await t.files('PUT', job.fileUploadUrl, { body });
    expect(put.status).toBe(200);
    expect(put.headers['etag']).toBe(`"${md5(body)}"`);
  });
});

describe('control API', () => {
  it('lists every job with the uploaded size and MD5 as the sandbox received them', async () => {
    const job = await newJob('listed.pdf');
    await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    await t.sandbox.settle();
    const res = await t.control('GET', '/jobs');
    expect(res.status).toBe(200);
    expect(res.body.items).toContainEqual(
      expect.objectContaining({
        id: job.id,
        uploadedSize: samplePdf.length,
        uploadedMd5: md5(samplePdf),
        sendingEventCount: 1,
      }),
    );
    const state = await t.control('GET', '/state');
    expect(state.body.counts.job).toBeGreaterThan(0);
  });

  it('moves the clock forward through POST /clock/advance', async () => {
    const before = Date.parse((await t.control('GET', '/state')).body.time);
    const res = await t.control('POST', '/clock/advance', { ms: 3_600_000 });
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.time) - before).toBeGreaterThanOrEqual(3_600_000);
  });

  it('injects an incoming Peppol document', async () => {
    const xml = readFileSync(new URL('../../samples/ubl/invoice-base-example.xml', import.meta.url), 'utf8');
    const res = await t.control('POST', '/peppol-documents', { xml });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^ppl_/);
    expect((await t.control('POST', '/peppol-documents', { xml: '<Order/>' })).status).toBe(400);
  });

  it('answers 400 to an invalid fault and 404 to an unknown control path', async () => {
    expect((await t.control('POST', '/faults', { errorRate: 2 })).status).toBe(400);
    expect((await t.control('GET', '/nothing')).status).toBe(404);
  });
});

describe('state folder and restart', () => {
  it('writes private credentials and an agent config fragment that references secrets by file', () => {
    const dir = t.stateDir;
    expect(statSync(path.join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(statSync(path.join(dir, 'pki', 'client.key')).mode & 0o777).toBe(0o600);
    const fragmentText = readFileSync(t.sandbox.paths.agentConfigFragment, 'utf8');
    expect(fragmentText).not.toContain(t.sandbox.credentials.clientSecret);
    expect(fragmentText).not.toContain(t.sandbox.credentials.apiKey);
    const fragment = parse(fragmentText);
    expect(fragment.service.apiUrl).toBe(t.sandbox.urls.api);
    const secretFile = /^\$\{file:(.+)\}$/.exec(fragment.service.clientSecret)?.[1] ?? '';
    expect(readFileSync(secretFile, 'utf8')).toBe(t.sandbox.credentials.clientSecret);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const info = JSON.parse(readFileSync(path.join(dir, 'sandbox.json'), 'utf8'));
    expect(info.urls.api).toBe(t.sandbox.urls.api);
  });

  it('keeps certificates, credentials, jobs and events across a restart on the same folder', async () => {
    const job = await newJob('persisted.pdf');
    await t.files('PUT', job.fileUploadUrl, { body: samplePdf });
    await t.sandbox.settle();
    const before = t.sandbox.credentials;
    const stateDir = t.stateDir;
    await t.stop({ keepState: true });
    t = await startTestSandbox({ stateDir });
    expect(t.sandbox.credentials.clientSecret).toBe(before.clientSecret);
    expect(t.sandbox.credentials.apiKey).toBe(before.apiKey);
    expect(t.sandbox.credentials.clientCertPem).toBe(before.clientCertPem);
    // The old client certificate still opens the new listeners.
    const oldAgent = new Agent({
      connect: { ca: before.caCertPem, cert: before.clientCertPem, key: before.clientKeyPem },
    });
    const res = await request(`${t.sandbox.urls.auth}/oauth2/token`, {
      method: 'POST',
      dispatcher: oldAgent,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: before.clientId,
        client_secret: before.clientSecret,
      }).toString(),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await oldAgent.close();
    const again = await t.api('GET', `/jobs/${job.id}`);
    expect(again.status).toBe(200);
    expect(again.body.sendingEventCount).toBe(1);
    expect((await t.api('GET', `/sending-events?jobId=${job.id}`)).body.totalItems).toBe(1);
  });
});
