import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { caught } from './support/caught.js';
import { FakeService, fakeClient, JOB } from './support/fake-service.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { json, problem } from './support/test-server.js';

let pki: TestPki;
let fake: FakeService;

beforeAll(() => {
  pki = makeTestPki();
});

beforeEach(async () => {
  fake = await FakeService.start(pki);
  return () => fake.close();
});

/** Records the waits instead of sleeping them. */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe('retries', () => {
  it('waits the Retry-After seconds of a 429 before trying again', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res, _call, n) =>
      n === 1
        ? problem(res, 429, 'Too Many Requests', 'slow down', { 'retry-after': '2' })
        : json(res, 200, JOB),
    );
    const { waits, sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep, retry: { maxDelayMs: 5_000, random: () => 0.5 } });
    const job = await client.jobs.get('job_1');
    await client.close();
    expect(job.id).toBe('job_1');
    expect(waits).toEqual([2_000]);
  });

  it('really sleeps a short Retry-After when no sleep is injected', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res, _call, n) =>
      n === 1
        ? problem(res, 429, 'Too Many Requests', undefined, { 'retry-after': '1' })
        : json(res, 200, JOB),
    );
    const client = fakeClient(fake, pki);
    const started = performance.now();
    await client.jobs.get('job_1');
    await client.close();
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('gives up at once with retryAfterMs when Retry-After exceeds the longest wait', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) =>
      problem(res, 429, 'Too Many Requests', undefined, { 'retry-after': '3600' }),
    );
    const { waits, sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_429');
    expect(err.retryAfterMs).toBe(3_600_000);
    expect(waits).toEqual([]);
  });

  it('retries a GET answered 503 with backoff and returns the later success', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res, _call, n) =>
      n <= 2 ? problem(res, 503, 'Service Unavailable') : json(res, 200, JOB),
    );
    const { waits, sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep, retry: { baseDelayMs: 100, random: () => 0.5 } });
    const job = await client.jobs.get('job_1');
    await client.close();
    expect(job.id).toBe('job_1');
    expect(fake.apiCalls('/jobs/job_1')).toHaveLength(3);
    // Full jitter: random 0.5 of a ceiling that doubles.
    expect(waits).toEqual([50, 100]);
  });

  it('stops after maxAttempts and surfaces the last status', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) => problem(res, 500, 'Internal Server Error', 'boom'));
    const { sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep, retry: { maxAttempts: 3 } });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_500');
    expect(fake.apiCalls('/jobs/job_1')).toHaveLength(3);
  });

  it('does not retry 501', async () => {
    fake.on('GET', '/jobs/job_1', (_req, res) => problem(res, 501, 'Not Implemented'));
    const { sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep });
    const err = await caught(client.jobs.get('job_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_501');
    expect(fake.apiCalls('/jobs/job_1')).toHaveLength(1);
  });

  it('never retries POST /jobs/single-file, even on 503', async () => {
    fake.on('POST', '/jobs/single-file', (_req, res) => problem(res, 503, 'Service Unavailable'));
    const { sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep });
    const err = await caught(client.jobs.createSingleFile({ workflowId: 'wf_pdf_email', filename: 'a.pdf' }));
    await client.close();
    expect(err.code).toBe('DOCEX_API_503');
    expect(err.route).toBe('/jobs/single-file');
    expect(fake.apiCalls('/jobs/single-file')).toHaveLength(1);
  });

  it('retries a GET whose connection was reset before any answer', async () => {
    fake.on('GET', '/jobs/job_1', (req, res, _call, n) => {
      if (n === 1) req.socket.destroy();
      else json(res, 200, JOB);
    });
    const { log, lines } = captureLogger();
    const client = fakeClient(fake, pki, { log });
    const job = await client.jobs.get('job_1');
    await client.close();
    expect(job.id).toBe('job_1');
    expect(fake.apiCalls('/jobs/job_1')).toHaveLength(2);
    expect(lines().some((l) => l['msg'] === 'api retry' && l['code'] === 'DOCEX_NETWORK')).toBe(true);
  });
});

describe('error details', () => {
  it('surfaces the problem details of an application/problem+json answer', async () => {
    fake.on('POST', '/jobs/payload-word', (_req, res) =>
      json(
        res,
        400,
        {
          type: 'about:blank',
          title: 'Bad Request',
          status: 400,
          detail: 'payload rule violated',
          errors: [{ field: 'payload.channelIdentifiers', message: 'EMAIL_ADDRESS is required' }],
        },
        { 'content-type': 'application/problem+json' },
      ),
    );
    const client = fakeClient(fake, pki);
    const err = await caught(
      client.jobs.createPayloadWord({
        workflowId: 'wf_payload_word_email',
        jobName: 'j',
        filename: 'j.docx',
        payload: { channelIdentifiers: [], extraInfoIdentifiers: [], templateData: {} },
      }),
    );
    await client.close();
    expect(err.code).toBe('DOCEX_API_400');
    expect(err.status).toBe(400);
    expect(err.message).toContain('payload rule violated');
    expect(err.problem).toEqual({
      title: 'Bad Request',
      detail: 'payload rule violated',
      errors: [{ field: 'payload.channelIdentifiers', message: 'EMAIL_ADDRESS is required' }],
    });
    expect(err.toJSON()).toMatchObject({ code: 'DOCEX_API_400', details: { route: '/jobs/payload-word' } });
  });

  it('surfaces a non-JSON error body as text', async () => {
    fake.on('GET', '/workflows/wf_1', (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad gateway from the proxy</body></html>');
    });
    const { sleep } = recordingSleep();
    const client = fakeClient(fake, pki, { sleep, retry: { maxAttempts: 2 } });
    const err = await caught(client.workflows.get('wf_1'));
    await client.close();
    expect(err.code).toBe('DOCEX_API_502');
    expect(err.problem).toBeUndefined();
    expect(err.text).toContain('Bad gateway from the proxy');
    expect(err.message).toContain('Bad gateway from the proxy');
    expect(err.route).toBe('/workflows/{id}');
  });
});
