import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, CLIENT_SECRET, FakeService, fakeClient, JOB } from './support/fake-service.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { json, startTlsServer } from './support/test-server.js';

let pki: TestPki;
let dir: string;

beforeAll(() => {
  pki = makeTestPki();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-secrets-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('secrets', () => {
  it('never writes the client secret, API key, tokens, key PEM or a URL signature to logs or errors', async () => {
    const fake = await FakeService.start(pki);
    const files = await startTlsServer(pki, (req, res) => {
      if (req.url?.includes('expired')) {
        res.writeHead(403);
        res.end(`expired: ${req.url}`);
        return;
      }
      res.writeHead(200, { etag: '"00000000000000000000000000000000"' });
      res.end();
    });
    const signature = 'X-Amz-Signature=7e1f0c9a8b7d6e5f4a3b2c1d';
    fake.on('GET', '/jobs/job_1', (_req, res, _call, n) =>
      n === 1 ? json(res, 401, { title: 'Unauthorized' }) : json(res, 200, JOB),
    );
    fake.on('POST', '/jobs/single-file', (_req, res) =>
      json(res, 201, { id: 'job_2', fileUploadUrl: `${files.url}/upload/job_2?${signature}` }),
    );
    fake.on('GET', '/jobs/echo', (req, res) =>
      json(res, 400, { title: 'Bad Request', detail: `header was ${req.headers['x-api-key']?.length} long` }),
    );
    const { log, raw } = captureLogger('trace');
    const client = fakeClient(fake, pki, { log });
    const errors: unknown[] = [];
    const attempt = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    };
    const file = path.join(dir, 'a.pdf');
    writeFileSync(file, 'hello');

    await attempt(() => client.jobs.get('job_1'));
    const created = await client.jobs.createSingleFile({ workflowId: 'wf', filename: 'a.pdf' });
    await attempt(() => client.jobs.uploadFile(created.fileUploadUrl, file));
    await attempt(() => client.jobs.uploadFile(`${files.url}/upload/expired?${signature}`, file));
    await attempt(() =>
      client.sendingEvents.downloadFile(`${files.url}/expired?${signature}`, path.join(dir, 'x')),
    );
    await attempt(() => client.jobs.get('echo'));
    const wrong = fakeClient(fake, pki, { log, clientSecret: `${CLIENT_SECRET}-wrong` });
    await attempt(() => wrong.jobs.get('job_1'));
    await client.close();
    await wrong.close();
    await fake.close();
    await files.close();

    expect(errors.length).toBeGreaterThanOrEqual(4);
    const keyBody = pki.client.keyPem.split('\n')[1]!;
    const haystack = [
      raw(),
      ...errors.map((e) => `${(e as Error).message}\n${JSON.stringify(e)}\n${String((e as Error).stack)}`),
    ].join('\n');
    expect(raw()).toContain('token refreshed');
    expect(raw()).toContain('api request');
    for (const secret of [CLIENT_SECRET, API_KEY, keyBody, signature, ...fake.issued]) {
      expect(haystack).not.toContain(secret);
    }
  });
});
