import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { caught } from './support/caught.js';
import { collect } from './support/collect.js';
import { FakeService, fakeClient, JOB } from './support/fake-service.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { json } from './support/test-server.js';

let pki: TestPki;
let fake: FakeService;

beforeAll(() => {
  pki = makeTestPki();
});

beforeEach(async () => {
  fake = await FakeService.start(pki);
  return () => fake.close();
});

describe('tolerant parsing', () => {
  it('accepts an unknown job status and logs it once at warn with field and value', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) => json(res, 200, { ...JOB, status: 'ARCHIVED', newField: 1 }));
    const { log, lines } = captureLogger('info');
    const client = fakeClient(fake, pki, { log });
    const first = await client.jobs.get('job_1');
    await client.jobs.get('job_1');
    await client.close();
    expect(first.status).toBe('ARCHIVED');
    expect(first['newField']).toBe(1);
    const warns = lines().filter((l) => l['level'] === 'warn');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ field: 'job.status', value: 'ARCHIVED' });
  });

  it('reads AWAITING_FOR_FILE as AWAITING_FILE_UPLOAD without a warning', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) => json(res, 200, { ...JOB, status: 'AWAITING_FOR_FILE' }));
    const { log, lines } = captureLogger('info');
    const client = fakeClient(fake, pki, { log });
    const job = await client.jobs.get('job_1');
    await client.close();
    expect(job.status).toBe('AWAITING_FILE_UPLOAD');
    expect(lines().filter((l) => l['level'] === 'warn')).toHaveLength(0);
  });

  it('logs unknown sending-event statuses and document types but returns the event', async () => {
    fake.on('GET', '/sending-events/se_1', (_req, res) =>
      json(res, 200, {
        id: 'se_1',
        jobId: 'job_1',
        status: 'PAUSED',
        businessStatus: 'SUCCESS',
        documents: [{ fileReference: 'f1', type: 'HOLOGRAM' }],
      }),
    );
    const { log, lines } = captureLogger('info');
    const client = fakeClient(fake, pki, { log });
    const event = await client.sendingEvents.get('se_1');
    await client.close();
    expect(event.status).toBe('PAUSED');
    const fields = lines()
      .filter((l) => l['level'] === 'warn')
      .map((l) => `${l['field']}=${l['value']}`);
    expect(fields).toEqual(['sendingEvent.status=PAUSED', 'document.type=HOLOGRAM']);
  });

  it('accepts jobId in place of id in the answer of POST /jobs/single-file', async () => {
    fake.on('POST', '/jobs/single-file', (_req, res) =>
      json(res, 201, {
        jobId: 'job_9',
        fileUploadUrl: 'https://files.example/upload/job_9?sig=abc',
        uploadExpiresAt: '2026-11-21T12:00:00.000Z',
      }),
    );
    const client = fakeClient(fake, pki);
    const created = await client.jobs.createSingleFile({ workflowId: 'wf_pdf_email', filename: 'a.pdf' });
    await client.close();
    expect(created).toEqual({
      id: 'job_9',
      fileUploadUrl: 'https://files.example/upload/job_9?sig=abc',
      uploadExpiresAt: '2026-11-21T12:00:00.000Z',
    });
    expect(JSON.parse(fake.apiCalls('/jobs/single-file')[0]!.body)).toEqual({
      workflowId: 'wf_pdf_email',
      filename: 'a.pdf',
    });
  });

  it('reports an answer of the wrong shape as DOCEX_RESPONSE_INVALID naming the field', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) => json(res, 200, { id: 'job_1' }));
    const client = fakeClient(fake, pki);
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_RESPONSE_INVALID');
    expect(err.problem?.errors?.map((e) => e.field)).toContain('status');
  });
});

describe('requests on the wire', () => {
  it('formats date-time filters as yyyy-MM-ddTHH:mm:ss.SSSZ from a Date or a string', async () => {
    fake.on('GET', '/jobs', (_req, res) => json(res, 200, { items: [], totalItems: 0 }));
    const client = fakeClient(fake, pki);
    await client.jobs.list({
      from: new Date(Date.UTC(2026, 10, 21, 9, 5, 3, 7)),
      until: '2026-11-22T01:00:00+01:00',
      workflowId: 'wf_pdf_email',
      maxItems: 10,
    });
    await client.close();
    const query = fake.apiCalls('/jobs')[0]!.query;
    expect(query.get('from')).toBe('2026-11-21T09:05:03.007Z');
    expect(query.get('until')).toBe('2026-11-22T00:00:00.000Z');
    expect(query.get('workflowId')).toBe('wf_pdf_email');
    expect(query.get('maxItems')).toBe('10');
    expect(query.has('after')).toBe(false);
  });

  it('rejects an unreadable date before sending anything', async () => {
    const client = fakeClient(fake, pki);
    const err = await caught(client.jobs.list({ from: 'yesterday-ish' }));
    await client.close();
    expect(err.code).toBe('DOCEX_INVALID_ARGUMENT');
    expect(fake.calls).toHaveLength(0);
  });

  it('percent-encodes path parameters such as a Peppol participant id', async () => {
    fake.on(
      'GET',
      '/peppol-incoming-documents/sender/0208%3A0123456789/document/doc_1/download-url',
      (_req, res) =>
        json(res, 200, { url: 'https://files.example/d?sig=1', expiresAt: '2026-11-21T10:10:00.000Z' }),
    );
    const client = fakeClient(fake, pki);
    const link = await client.peppol.downloadUrl('0208:0123456789', 'doc_1');
    await client.close();
    expect(link.url).toBe('https://files.example/d?sig=1');
  });

  it('sends the webhook test body and the sending-event resend without a body', async () => {
    fake.on('POST', '/webhooks/wh_1/test', (_req, res) => json(res, 200, { status: 204 }));
    fake.on('POST', '/sending-events/se_1/resend', (_req, res) =>
      json(res, 201, {
        id: 'se_2',
        jobId: 'job_1',
        status: 'IN_PROGRESS',
        businessStatus: 'NOT_STARTED',
        resendOf: 'se_1',
      }),
    );
    const client = fakeClient(fake, pki);
    const test = await client.webhooks.test('wh_1', 'job.status.changed');
    const resent = await client.sendingEvents.resend('se_1');
    await client.close();
    expect(test).toEqual({ status: 204 });
    expect(JSON.parse(fake.apiCalls('/webhooks/wh_1/test')[0]!.body)).toEqual({
      eventType: 'job.status.changed',
    });
    expect(resent.resendOf).toBe('se_1');
    expect(fake.apiCalls('/sending-events/se_1/resend')[0]!.body).toBe('');
  });

  it('reads health, usage totals and a department through their routes', async () => {
    fake.on('GET', '/health', (_req, res) => json(res, 200, { status: 'ok', version: '1.0.0' }));
    fake.on('GET', '/usage', (_req, res) =>
      json(res, 200, {
        companyId: 'c',
        from: 'a',
        until: 'b',
        totals: [{ channel: 'EMAIL', unit: 'SENDING', count: 3 }],
      }),
    );
    fake.on('PATCH', '/departments/dep_1', (_req, res, call) =>
      json(res, 200, { id: 'dep_1', companyId: 'c', name: JSON.parse(call.body).name }),
    );
    const client = fakeClient(fake, pki);
    expect((await client.health()).status).toBe('ok');
    const usage = await client.usage.get({ from: '2026-11-01T00:00:00Z', until: '2026-12-01T00:00:00Z' });
    const dep = await client.departments.update('dep_1', { name: 'Renamed' });
    await client.close();
    expect(usage.totals[0]?.count).toBe(3);
    expect(fake.apiCalls('/usage')[0]!.query.get('from')).toBe('2026-11-01T00:00:00.000Z');
    expect(dep.name).toBe('Renamed');
  });
});

describe('pagination', () => {
  const jobs = Array.from({ length: 7 }, (_, i) => ({ ...JOB, id: `job_${i + 1}` }));

  it('follows after across short pages until a page comes back empty', async () => {
    fake.on('GET', '/jobs', (_req, res, call) => {
      const after = call.query.get('after');
      const start = after ? jobs.findIndex((j) => j.id === after) + 1 : 0;
      // Fewer than asked, as the specification allows.
      const max = Math.min(Number(call.query.get('maxItems')), 2);
      json(res, 200, { items: jobs.slice(start, start + max), totalItems: jobs.length });
    });
    const client = fakeClient(fake, pki);
    const seen = await collect(client.jobs.iterate({ pageSize: 3, workflowId: 'wf_pdf_email' }));
    await client.close();
    expect(seen.map((j) => j.id)).toEqual(jobs.map((j) => j.id));
    const calls = fake.apiCalls('/jobs');
    // Only an empty page proves the end: totalItems (7) was reached after the fourth.
    expect(calls).toHaveLength(5);
    expect(calls.map((c) => c.query.get('after'))).toEqual([null, 'job_2', 'job_4', 'job_6', 'job_7']);
    expect(
      calls.every((c) => c.query.get('maxItems') === '3' && c.query.get('workflowId') === 'wf_pdf_email'),
    ).toBe(true);
  });

  it('stops on an empty page when totalItems is absent', async () => {
    fake.on('GET', '/workflows', (_req, res, _call, n) =>
      json(res, 200, {
        items:
          n === 1
            ? [
                {
                  id: 'wf_1',
                  name: 'a',
                  enabled: true,
                  validated: true,
                  tasks: [],
                  inputSource: { type: 'PDF' },
                  companyId: 'c',
                  departmentId: 'd',
                },
              ]
            : [],
      }),
    );
    const client = fakeClient(fake, pki);
    const seen = await collect(client.workflows.iterate({ pageSize: 1 }));
    await client.close();
    expect(seen.map((w) => w.id)).toEqual(['wf_1']);
    expect(fake.apiCalls('/workflows')).toHaveLength(2);
  });

  it('fails instead of looping when the server ignores after', async () => {
    fake.on('GET', '/jobs', (_req, res) => json(res, 200, { items: [jobs[0]] }));
    const client = fakeClient(fake, pki);
    const err = await caught(collect(client.jobs.iterate({ pageSize: 1 })));
    await client.close();
    expect(err.code).toBe('DOCEX_RESPONSE_INVALID');
  });

  it('follows nextCursor through usage details and stops when it is absent', async () => {
    const event = (id: string) => ({
      id,
      timestamp: 't',
      companyId: 'c',
      channel: 'EMAIL',
      unit: 'SENDING',
      quantity: 1,
    });
    fake.on('GET', '/usage/details', (_req, res, call) => {
      const cursor = call.query.get('cursor');
      if (!cursor) json(res, 200, { items: [event('u1'), event('u2')], nextCursor: 'c2' });
      else json(res, 200, { items: [event('u3')] });
    });
    const client = fakeClient(fake, pki);
    const seen = await collect(
      client.usage.iterateDetails({
        from: '2026-11-01T00:00:00.000Z',
        until: '2026-12-01T00:00:00.000Z',
        departmentIds: ['d1', 'd2'],
      }),
    );
    await client.close();
    expect(seen.map((e) => e.id)).toEqual(['u1', 'u2', 'u3']);
    const calls = fake.apiCalls('/usage/details');
    expect(calls.map((c) => c.query.get('cursor'))).toEqual([null, 'c2']);
    expect(calls[0]!.query.getAll('departmentIds')).toEqual(['d1', 'd2']);
  });
});
