import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/api/errors.js';
import { REDACT_PATHS } from '../../src/core/logger.js';
import {
  API_KEY,
  CLIENT_SECRET,
  FakeService,
  fakeClient,
  JOB,
  type RecordedCall,
} from './support/fake-service.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { json, problem, startTlsServer } from './support/test-server.js';

let pki: TestPki;
let dir: string;

beforeAll(() => {
  pki = makeTestPki();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-secrets-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What an echoing server or proxy sends back: the request's headers and body. */
function echo(call: RecordedCall): string {
  return `${call.method} ${call.path}\nauthorization: ${call.headers.authorization}\nx-api-key: ${call.headers['x-api-key']}\n\n${call.body}`;
}

function echoText(res: ServerResponse, status: number, call: RecordedCall): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(echo(call));
}

/** Everything an error shows: message, JSON, stack, util.inspect and pino's err serializer. */
function renderings(errors: unknown[], log: { error: (o: object, m: string) => void }): string {
  return errors
    .map((e) => {
      log.error({ err: e }, 'call failed');
      const err = e as Error;
      return `${err.message}\n${JSON.stringify(err)}\n${String(err.stack)}\n${inspect(err, { depth: 10 })}`;
    })
    .join('\n');
}

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
    // Servers and proxies that echo the request, in problem details, plain text and a 200.
    fake.on('GET', '/jobs/echo-problem', (_req, res, call) =>
      json(res, 400, {
        title: `Bad token ${call.headers.authorization}`,
        detail: echo(call),
        errors: [{ field: 'x-api-key', message: `${call.headers['x-api-key']}` }, { got: echo(call) }],
      }),
    );
    fake.on('GET', '/jobs/echo-text', (_req, res, call) => echoText(res, 400, call));
    fake.on('GET', '/jobs/echo-200', (_req, res, call) => echoText(res, 200, call));
    await attempt(() => client.jobs.get('echo-problem'));
    await attempt(() => client.jobs.get('echo-text'));
    await attempt(() => client.jobs.get('echo-200'));
    const wrong = fakeClient(fake, pki, { log, clientSecret: `${CLIENT_SECRET}-wrong` });
    await attempt(() => wrong.jobs.get('job_1'));
    // Token endpoints that echo the form body (client_secret in it, URL-encoded).
    const oddSecret = 'cs/ODD+secret with spaces&=%7f';
    const echoing = fakeClient(fake, pki, { log, clientSecret: oddSecret, retry: { maxAttempts: 1 } });
    fake.tokenOverride = (res, call) => echoText(res, 401, call);
    await attempt(() => echoing.jobs.get('job_1'));
    fake.tokenOverride = (res, call) =>
      json(res, 400, { error: 'invalid_request', error_description: `body was ${call.body}` });
    await attempt(() => echoing.jobs.get('job_1'));
    fake.tokenOverride = (res, call) => problem(res, 503, `echo ${call.body}`, call.body);
    await attempt(() => echoing.jobs.get('job_1'));
    await client.close();
    await wrong.close();
    await echoing.close();
    await fake.close();
    await files.close();

    expect(errors.length).toBeGreaterThanOrEqual(10);
    const keyBody = pki.client.keyPem.split('\n')[1]!;
    const rendered = renderings(errors, log);
    const haystack = `${raw()}\n${rendered}`;
    expect(raw()).toContain('token refreshed');
    expect(raw()).toContain('api request');
    // The echoes did arrive and are shown, redacted: the test would see a leak.
    expect(rendered).toContain('x-api-key: [redacted]');
    expect(rendered).toContain('client_secret=[redacted]');
    const encoded = new URLSearchParams({ s: oddSecret }).toString().slice(2);
    for (const secret of [CLIENT_SECRET, API_KEY, keyBody, signature, ...fake.issued, oddSecret, encoded]) {
      expect(haystack).not.toContain(secret);
    }
  });

  it('redacts a secret as is and in its URL-encoded forms, and leaves short values alone', () => {
    const secret = 'a+b/c d&e=f%';
    const text = `raw ${secret} uri ${encodeURIComponent(secret)} form ${new URLSearchParams({ s: secret }).toString().slice(2)}`;
    expect(redactSecrets(text, [secret, 'abc'])).toBe('raw [redacted] uri [redacted] form [redacted]');
    expect(redactSecrets('abc abc', ['abc'])).toBe('abc abc');
    // Shorter than any form redacted (an empty PUT answer): returned as is, nothing computed.
    expect(redactSecrets('', [secret])).toBe('');
    expect(redactSecrets('12345', ['12345678'])).toBe('12345');
    expect(redactSecrets('123456', ['123456'])).toBe('[redacted]');
  });

  it('makes the logger redact keys, headers and credentials at the top and two levels down', () => {
    const { log, raw } = captureLogger('info');
    const values = Array.from({ length: 12 }, (_, i) => `leak-${i}-value`);
    log.info(
      {
        authorization: values[0],
        'x-api-key': values[1],
        key: values[2],
        keyPem: values[3],
        clientKeyPem: values[4],
        signature: values[5],
        headers: { authorization: values[6], 'x-api-key': values[7] },
        config: { service: { clientSecret: values[8], apiKey: values[9], secret: values[10] } },
        credentials: { clientId: values[11] },
      },
      'redaction probe',
    );
    expect(raw()).toContain('redaction probe');
    for (const value of values) expect(raw()).not.toContain(value);
    expect(REDACT_PATHS).toContain('credentials.*');
  });
});
