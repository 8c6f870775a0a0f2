import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient, type DocexClientOptions } from '../../src/api/client.js';
import { createFilesAgent } from '../../src/api/transport.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { caught } from './support/caught.js';
import { sandboxClientOptions } from './support/sandbox-client.js';

let dir: string;
let sandbox: RunningSandbox;
let control: Dispatcher;
let pdfPath: string;
const UPLOAD_WINDOW_MS = 60_000;

function options(overrides: Partial<DocexClientOptions> = {}): DocexClientOptions {
  return sandboxClientOptions(sandbox, overrides);
}

async function controlCall(
  method: 'GET' | 'POST' | 'DELETE',
  route: string,
  body?: unknown,
): Promise<unknown> {
  const answer = await request(`${sandbox.urls.control}${route}`, {
    dispatcher: control,
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await answer.body.text();
  expect(answer.statusCode).toBeLessThan(300);
  return text ? JSON.parse(text) : undefined;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-client-sandbox-'));
  sandbox = await startSandbox({
    stateDir: path.join(dir, 'state'),
    uploadWindowMs: UPLOAD_WINDOW_MS,
    log: silentLogger(),
  });
  control = createFilesAgent(sandbox.credentials.caCertPem);
  const pdf = await PDFDocument.create();
  const page = pdf.addPage();
  page.drawText('Invoice 42 for someone@example.com', { font: await pdf.embedFont(StandardFonts.Helvetica) });
  pdfPath = path.join(dir, 'invoice.pdf');
  writeFileSync(pdfPath, await pdf.save());
});

afterAll(async () => {
  await control?.close();
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('client against the sandbox', () => {
  it('passes all three auth layers and reads health and a seeded workflow', async () => {
    const client = new DocexClient(options());
    const health = await client.health();
    const workflow = await client.workflows.get(SEED.workflows.pdfEmail);
    await client.close();
    expect(health.status).toBe('ok');
    expect(workflow.inputSource.type).toBe('PDF');
    expect(workflow.validated).toBe(true);
  });

  it('fails the handshake without a client certificate: DOCEX_TLS', async () => {
    const c = sandbox.credentials;
    const client = new DocexClient(
      options({ tls: { ca: c.caCertPem, cert: '', key: '' }, retry: { maxAttempts: 1 } }),
    );
    const err = await caught(client.health());
    await client.close();
    expect(err.code).toBe('DOCEX_TLS');
  });

  it('rejects a wrong API key with DOCEX_API_403', async () => {
    const client = new DocexClient(options({ apiKey: 'wrong-api-key' }));
    const err = await caught(client.workflows.get(SEED.workflows.pdfEmail));
    await client.close();
    expect(err.code).toBe('DOCEX_API_403');
  });

  it('rejects a wrong client secret with DOCEX_AUTH_TOKEN', async () => {
    const client = new DocexClient(options({ clientSecret: 'wrong-secret' }));
    const err = await caught(client.workflows.get(SEED.workflows.pdfEmail));
    await client.close();
    expect(err.code).toBe('DOCEX_AUTH_TOKEN');
    expect(err.status).toBe(401);
  });

  it('creates a single-file job, uploads with a matching ETag, and downloads the same bytes back as ORIGINAL', async () => {
    const client = new DocexClient(options());
    const created = await client.jobs.createSingleFile({
      workflowId: SEED.workflows.pdfEmail,
      filename: 'invoice.pdf',
    });
    const awaiting = await client.jobs.get(created.id);
    const uploaded = await client.jobs.uploadFile(created.fileUploadUrl, pdfPath);
    // The service turns an upload into sending events after answering the PUT.
    await sandbox.settle();
    const after = await client.jobs.get(created.id);
    const events = await client.sendingEvents.list({ jobId: created.id });
    const event = events.items[0]!;
    const original = event.documents?.find((d) => d.type === 'ORIGINAL');
    const link = await client.sendingEvents.downloadUrl(event.id, original!.fileReference);
    const target = path.join(dir, 'original.pdf');
    const downloaded = await client.sendingEvents.downloadFile(link.url, target, {
      expectedSize: uploaded.size,
    });
    await client.close();
    expect(events.items).toHaveLength(1);
    expect(downloaded.md5).toBe(uploaded.md5);
    expect(awaiting.status).toBe('AWAITING_FILE_UPLOAD');
    expect(after.status).not.toBe('AWAITING_FILE_UPLOAD');
    const jobs = (await controlCall('GET', '/jobs')) as {
      items: { id: string; uploadedMd5: string; uploadedSize: number }[];
    };
    const seen = jobs.items.find((j) => j.id === created.id);
    expect(seen?.uploadedMd5).toBe(uploaded.md5);
    expect(seen?.uploadedSize).toBe(uploaded.size);
  });

  it('retries injected 503s and a 429 burst (waiting Retry-After) on a GET, and sends a job-creating POST once', async () => {
    const waits: number[] = [];
    const client = new DocexClient(options({ sleep: async (ms) => void waits.push(ms) }));
    await controlCall('POST', '/faults', {
      route: '/workflows/:id',
      method: 'GET',
      failNext: 2,
      status: 503,
    });
    const workflow = await client.workflows.get(SEED.workflows.pdfEmail);
    await controlCall('DELETE', '/faults');
    await controlCall('POST', '/faults', {
      route: '/workflows/:id',
      method: 'GET',
      burst429: { count: 2, retryAfterSeconds: 1 },
    });
    const again = await client.workflows.get(SEED.workflows.pdfEmail);
    const faults = (await controlCall('GET', '/faults')) as { items: { burst429?: { count: number } }[] };
    await controlCall('DELETE', '/faults');
    await controlCall('POST', '/faults', {
      route: '/jobs/single-file',
      method: 'POST',
      failNext: 1,
      status: 503,
    });
    const err = await caught(
      client.jobs.createSingleFile({ workflowId: SEED.workflows.pdfEmail, filename: 'x.pdf' }),
    );
    await controlCall('DELETE', '/faults');
    await client.close();
    expect(workflow.id).toBe(SEED.workflows.pdfEmail);
    expect(again.id).toBe(SEED.workflows.pdfEmail);
    // Both 429s were served (the burst is used up) and each was waited out as Retry-After said.
    expect(faults.items[0]?.burst429?.count).toBe(0);
    expect(waits.slice(2)).toEqual([1_000, 1_000]);
    expect(err.code).toBe('DOCEX_API_503');
  });

  it('pages through jobs with after and maxItems, and maxItems outside 1..1000 is DOCEX_API_400', async () => {
    const client = new DocexClient(options());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await client.jobs.createSingleFile({ workflowId: SEED.workflows.pdfPrint, filename: `p${i}.pdf` }))
          .id,
      );
    }
    const seen: string[] = [];
    for await (const job of client.jobs.iterate({ workflowId: SEED.workflows.pdfPrint, pageSize: 2 }))
      seen.push(job.id);
    const firstPage = await client.jobs.list({ workflowId: SEED.workflows.pdfPrint, maxItems: 2 });
    const tooMany = await caught(client.jobs.list({ maxItems: 1001 }));
    const tooFew = await caught(client.jobs.list({ maxItems: 0 }));
    await client.close();
    expect(seen).toEqual(ids);
    expect(firstPage.items).toHaveLength(2);
    expect(firstPage.totalItems).toBe(5);
    expect(tooMany.code).toBe('DOCEX_API_400');
    expect(tooFew.code).toBe('DOCEX_API_400');
  });

  // Moves the sandbox clock: keep it last.
  it('reports an upload after the window as DOCEX_UPLOAD_EXPIRED', async () => {
    const client = new DocexClient(options());
    const created = await client.jobs.createSingleFile({
      workflowId: SEED.workflows.pdfEmail,
      filename: 'late.pdf',
    });
    await controlCall('POST', '/clock/advance', { ms: UPLOAD_WINDOW_MS + 1_000 });
    const err = await caught(client.jobs.uploadFile(created.fileUploadUrl, pdfPath));
    const gone = await caught(client.jobs.get(created.id));
    await client.close();
    expect(err.code).toBe('DOCEX_UPLOAD_EXPIRED');
    expect(gone.code).toBe('DOCEX_API_404');
  });
});
