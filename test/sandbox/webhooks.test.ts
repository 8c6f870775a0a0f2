import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { UploadReader } from '../../src/sandbox/content/upload-reader.js';
import { SandboxClock, type SandboxContext } from '../../src/sandbox/context.js';
import { addPeppolDocument } from '../../src/sandbox/seed.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { Store } from '../../src/sandbox/store.js';
import {
  WEBHOOK_DELIVERY_KIND,
  WEBHOOK_KIND,
  type WebhookDeliveryRecord,
  WebhookDispatcher,
} from '../../src/sandbox/webhook-dispatcher.js';
import { type Harness, startHarness } from './webhooks-harness.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A subscriber on loopback: records every request, answers the next scripted status (then 200). */
async function startReceiver(statuses: number[] = []) {
  const received: Received[] = [];
  const script = [...statuses];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = script.shift() ?? 200;
      if (status === -1) return; // never answer
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('webhook subscription routes', () => {
  let h: Harness;
  let receiver: Receiver;
  beforeAll(async () => {
    h = await startHarness();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await h?.stop();
  });

  it('creates a subscription and shows the secret only on create', async () => {
    const res = await h.call('POST', '/webhooks', {
      body: { url: receiver.url, eventTypes: ['job.status.changed'], description: 'ERP' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: receiver.url,
      eventTypes: ['job.status.changed'],
      enabled: true,
      description: 'ERP',
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const read = await h.call('GET', `/webhooks/${res.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');
    expect(read.text).not.toContain(res.body.secret.slice(6));
    const list = await h.call('GET', '/webhooks');
    expect(list.body.items.map((s: { id: string }) => s.id)).toContain(res.body.id);
    expect(list.text).not.toContain('whsec_');
  });

  it('rejects a non-HTTP URL, unknown or missing event types with 400', async () => {
    for (const body of [
      { url: 'ftp://example.com/x', eventTypes: ['job.status.changed'] },
      { url: 'not a url', eventTypes: ['job.status.changed'] },
      { url: receiver.url, eventTypes: ['job.created'] },
      { url: receiver.url, eventTypes: [] },
    ]) {
      const res = await h.call('POST', '/webhooks', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('updates, resets the secret and deletes a subscription', async () => {
    const created = (
      await h.call('POST', '/webhooks', { body: { url: receiver.url, eventTypes: ['job.status.changed'] } })
    ).body;
    const patched = await h.call('PATCH', `/webhooks/${created.id}`, {
      body: { enabled: false, eventTypes: ['job.status.changed', 'sending.event.file.ready'] },
    });
    expect(patched.body).toMatchObject({
      enabled: false,
      eventTypes: ['job.status.changed', 'sending.event.file.ready'],
    });
    expect(patched.body).not.toHaveProperty('secret');
    const reset = await h.call('POST', `/webhooks/${created.id}/reset-secret`);
    expect(reset.status).toBe(200);
    expect(reset.body.id).toBe(created.id);
    expect(reset.body.secret).toMatch(/^whsec_/);
    expect(reset.body.secret).not.toBe(created.secret);
    expect((await h.call('DELETE', `/webhooks/${created.id}`)).body).toEqual({ success: true });
    expect((await h.call('GET', `/webhooks/${created.id}`)).status).toBe(404);
  });

  it("answers 403 for another company's subscription", async () => {
    const mine = (
      await h.call('POST', '/webhooks', { body: { url: receiver.url, eventTypes: ['job.status.changed'] } })
    ).body;
    const res = await h.call('GET', `/webhooks/${mine.id}`, {
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(res.status).toBe(403);
  });

  it('sends a signed test event and answers the subscriber status', async () => {
    const sub = (
      await h.call('POST', '/webhooks', {
        body: { url: receiver.url, eventTypes: ['sending.event.file.ready'] },
      })
    ).body;
    const before = receiver.received.length;
    const res = await h.call('POST', `/webhooks/${sub.id}/test`, { body: {} });
    expect(res.body).toEqual({ status: 200 });
    const delivery = receiver.received[before]!;
    const payload = verify(sub.secret, delivery) as Record<string, unknown>;
    expect(payload).toMatchObject({
      type: 'sending.event.file.ready',
      companyId: SEED.partnerCompanyId,
      data: { type: 'DELIVERY_PROOF', test: true },
    });
    expect(payload['id']).toBe(delivery.headers['webhook-id']);
  });

  it('needs eventType on a test of a subscription with several types', async () => {
    const sub = (
      await h.call('POST', '/webhooks', {
        body: { url: receiver.url, eventTypes: ['job.status.changed', 'peppol.document.received'] },
      })
    ).body;
    const missing = await h.call('POST', `/webhooks/${sub.id}/test`);
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/eventType is required/);
    expect(
      (await h.call('POST', `/webhooks/${sub.id}/test`, { body: { eventType: 'sending.event.file.ready' } }))
        .status,
    ).toBe(400);
    const ok = await h.call('POST', `/webhooks/${sub.id}/test`, {
      body: { eventType: 'peppol.document.received' },
    });
    expect(ok.body).toEqual({ status: 200 });
  });

  it('answers status 0 when nobody listens at the URL', async () => {
    const gone = await startReceiver();
    await gone.close();
    const sub = (
      await h.call('POST', '/webhooks', { body: { url: gone.url, eventTypes: ['job.status.changed'] } })
    ).body;
    expect((await h.call('POST', `/webhooks/${sub.id}/test`)).body).toEqual({ status: 0 });
  });

  it('delivers a real peppol.document.received event to a subscriber of the company', async () => {
    const own = await startReceiver();
    try {
      const sub = (
        await h.call('POST', '/webhooks', {
          body: { url: own.url, eventTypes: ['peppol.document.received'] },
        })
      ).body;
      const xml =
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" xmlns:cbc="x" xmlns:cac="y"><cbc:ID>N1</cbc:ID><cbc:IssueDate>2026-11-01</cbc:IssueDate><cac:AccountingSupplierParty><cac:Party><cbc:EndpointID schemeID="0208">0123456789</cbc:EndpointID></cac:Party></cac:AccountingSupplierParty><cac:AccountingCustomerParty><cac:Party><cbc:EndpointID schemeID="0208">0987654321</cbc:EndpointID></cac:Party></cac:AccountingCustomerParty></Invoice>';
      const doc = addPeppolDocument(h.sandbox.ctx, xml);
      await until(() => own.received.length === 1);
      const payload = verify(sub.secret, own.received[0]!) as Record<string, unknown>;
      expect(payload).toMatchObject({
        type: 'peppol.document.received',
        companyId: SEED.partnerCompanyId,
        data: { documentId: doc.id, senderId: '0208:0123456789' },
      });
    } finally {
      await own.close();
    }
  });
});

describe('WebhookDispatcher', () => {
  let dir: string;
  let store: Store;
  const receivers: Receiver[] = [];
  const dispatchers: WebhookDispatcher[] = [];

  function context(): Omit<SandboxContext, 'emit'> {
    let n = 0;
    return {
      store,
      clock: new SandboxClock(systemClock),
      log: silentLogger(),
      settings: {
        uploadWindowMs: 7_200_000,
        speed: 1,
        maxUploadBytes: 1e9,
        downloadUrlValidityMs: 600_000,
        names: 'spec',
      },
      urls: { api: '', auth: '', files: '', control: '' },
      signer: { sign: () => '', verify: () => ({ path: '', expiresAt: 0 }) },
      blobDir: dir,
      uploadReader: new UploadReader(),
      newId: (prefix) =>
        `${prefix}_${Date.now().toString(36)}${(n++).toString(36)}${randomUUID().slice(0, 4)}`,
    };
  }

  function dispatcher(retryDelaysMs: number[], timeoutMs?: number, ctx = context()): WebhookDispatcher {
    const d = new WebhookDispatcher(ctx, {
      retryDelaysMs,
      pollIntervalMs: 10,
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    dispatchers.push(d);
    return d;
  }

  async function receiver(statuses: number[] = []): Promise<Receiver> {
    const r = await startReceiver(statuses);
    receivers.push(r);
    return r;
  }

  function subscribe(url: string, eventTypes: string[], enabled = true, companyId = 'cmp_a') {
    const secret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
    const id = `wh_${randomUUID()}`;
    store.insert(
      WEBHOOK_KIND,
      { id, companyId, url, eventTypes, enabled, secret, createdAt: '', lastModifiedAt: '' },
      { companyId },
    );
    return { id, secret };
  }

  const deliveries = () => store.list<WebhookDeliveryRecord>(WEBHOOK_DELIVERY_KIND);

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s2-wh-'));
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    store?.close();
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const freshStore = () => {
    store = new Store(path.join(dir, `${randomUUID()}.db`));
  };

  it('retries after 500s with the same webhook-id, each attempt freshly signed', async () => {
    freshStore();
    const r = await receiver([500, 503]);
    const sub = subscribe(r.url, ['job.status.changed']);
    const d = dispatcher([20, 20, 20]);
    d.start();
    d.enqueue({
      type: 'job.status.changed',
      companyId: 'cmp_a',
      data: { jobId: 'job_1', status: 'COMPLETED', previousStatus: 'PROCESSING' },
    });
    await until(() => deliveries()[0]?.state === 'DELIVERED');
    expect(r.received).toHaveLength(3);
    const ids = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const attempt of r.received) {
      expect(verify(sub.secret, attempt)).toMatchObject({
        type: 'job.status.changed',
        data: { jobId: 'job_1' },
      });
    }
    expect(deliveries()[0]).toMatchObject({ attempts: 3, lastStatus: 200, state: 'DELIVERED' });
  });

  it('gives up as FAILED after the last retry delay', async () => {
    freshStore();
    const r = await receiver([500, 500, 500, 500, 500, 500, 500]);
    subscribe(r.url, ['job.status.changed']);
    const d = dispatcher([10, 10, 10, 10, 10]);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: {} });
    await until(() => deliveries()[0]?.state === 'FAILED');
    expect(r.received).toHaveLength(6);
    expect(deliveries()[0]).toMatchObject({ attempts: 6, lastStatus: 500 });
  });

  it('lets a receiver reject a tampered body or a wrong secret', async () => {
    freshStore();
    const r = await receiver();
    const sub = subscribe(r.url, ['peppol.document.received']);
    const d = dispatcher([10]);
    d.start();
    d.enqueue({
      type: 'peppol.document.received',
      companyId: 'cmp_a',
      data: { documentId: 'ppl_1', senderId: '0208:1' },
    });
    await until(() => r.received.length === 1);
    const got = r.received[0]!;
    expect(() => verify(sub.secret, got)).not.toThrow();
    expect(() => verify(sub.secret, { ...got, body: got.body.replace('ppl_1', 'ppl_2') })).toThrow(
      /signature/i,
    );
    expect(() => verify(`whsec_${Buffer.from('other-secret-value').toString('base64')}`, got)).toThrow();
  });

  it('fans out only to enabled subscriptions of the company that want the type', async () => {
    freshStore();
    const wanted = await receiver();
    const other = await receiver();
    subscribe(wanted.url, ['job.status.changed', 'peppol.document.received']);
    subscribe(other.url, ['peppol.document.received']);
    subscribe(other.url, ['job.status.changed'], false);
    subscribe(other.url, ['job.status.changed'], true, 'cmp_b');
    const d = dispatcher([10]);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: { jobId: 'j' } });
    await until(() => wanted.received.length === 1);
    await d.tick();
    expect(other.received).toHaveLength(0);
    expect(deliveries()).toHaveLength(1);
  });

  it('treats no answer within the timeout as a failed attempt and retries', async () => {
    freshStore();
    const r = await receiver([-1]);
    subscribe(r.url, ['job.status.changed']);
    // The answered attempt must fit in the timeout too, on a loaded machine.
    const d = dispatcher([10], 1000);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: {} });
    await until(() => deliveries()[0]?.state === 'DELIVERED');
    expect(r.received).toHaveLength(2);
    expect(deliveries()[0]).toMatchObject({ attempts: 2, lastStatus: 200 });
  });

  it('resumes pending deliveries from the store after a restart', async () => {
    freshStore();
    const r = await receiver([500]);
    const sub = subscribe(r.url, ['job.status.changed']);
    // A long retry delay: the first dispatcher stops before the retry is due.
    // The retry waits for the sandbox clock, moved only once the first dispatcher stopped: a
    // slow turn of this test cannot let it run before the stop.
    const ctx = context();
    const first = dispatcher([60_000], undefined, ctx);
    first.start();
    first.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: { jobId: 'j9' } });
    await until(() => deliveries()[0]?.attempts === 1);
    await first.stop();
    expect(deliveries()[0]).toMatchObject({ state: 'PENDING', lastStatus: 500 });

    ctx.clock.advance(60_000);
    const second = dispatcher([60_000], undefined, ctx);
    second.start();
    await until(() => deliveries()[0]?.state === 'DELIVERED');
    expect(r.received).toHaveLength(2);
    expect(r.received[1]!.headers['webhook-id']).toBe(r.received[0]!.headers['webhook-id']);
    expect(verify(sub.secret, r.received[1]!)).toMatchObject({ data: { jobId: 'j9' } });
  });

  it('aborts a delivery in flight on stop instead of waiting for its timeout, and keeps it pending', async () => {
    freshStore();
    const r = await receiver([-1]);
    subscribe(r.url, ['job.status.changed']);
    const d = dispatcher([10], 15_000);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: { jobId: 'j_stop' } });
    await until(() => r.received.length === 1);
    const started = Date.now();
    await d.stop();
    // Far under the delivery's 15 s timeout, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(7_500);
    // Not counted as an attempt: the next start sends it again with the same webhook-id.
    expect(deliveries()[0]).toMatchObject({ state: 'PENDING', attempts: 0 });
  });

  it('cancels a pending delivery whose subscription was disabled', async () => {
    freshStore();
    const r = await receiver([500]);
    const sub = subscribe(r.url, ['job.status.changed']);
    // The retry is due when the sandbox clock says so, moved only after the subscription is
    // disabled: a slow turn of this test cannot let the retry go out first.
    const ctx = context();
    const d = dispatcher([60_000], undefined, ctx);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: {} });
    await until(() => deliveries()[0]?.attempts === 1);
    const record = store.get(WEBHOOK_KIND, sub.id)!;
    store.put(WEBHOOK_KIND, { ...record, enabled: false });
    ctx.clock.advance(60_000);
    await until(() => deliveries()[0]?.state === 'CANCELLED');
    expect(r.received).toHaveLength(1);
  });

  it('signs with real time when the sandbox clock runs ahead, and retries when that clock reaches the delay', async () => {
    freshStore();
    const r = await receiver([500]);
    const sub = subscribe(r.url, ['job.status.changed']);
    const ctx = context();
    ctx.clock.advance(2 * 3600 * 1000);
    const d = dispatcher([60_000], undefined, ctx);
    d.start();
    d.enqueue({ type: 'job.status.changed', companyId: 'cmp_a', data: {} });
    await until(() => deliveries()[0]?.attempts === 1);
    // A pass over the due attempts, waited for: the retry is not due before the clock reaches its delay.
    await d.tick();
    expect(r.received).toHaveLength(1);
    expect(deliveries()[0]).toMatchObject({ state: 'PENDING', attempts: 1 });
    ctx.clock.advance(60_000);
    await until(() => deliveries()[0]?.state === 'DELIVERED');
    expect(() => verify(sub.secret, r.received[1]!)).not.toThrow();
    const body = JSON.parse(r.received[1]!.body) as { timestamp: string };
    expect(Date.parse(body.timestamp) - Date.now()).toBeGreaterThan(3600 * 1000);
  });
});
