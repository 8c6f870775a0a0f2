import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { WebhookDelivery } from '../../src/domain/wire.js';
import type { InboxStore } from '../../src/returns/inbox-store.js';
import { SqliteInboxStore } from '../../src/returns/sqlite-inbox-store.js';
import { WebhookReceiver } from '../../src/returns/webhook-receiver.js';
import { SecretRing, storeWebhookSecret, webhookSecretsDir } from '../../src/returns/webhook-secrets.js';
import { newWebhookSecret } from '../../src/sandbox/routes/webhooks.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';

const PATH = '/docex/webhooks';
const MAX = 16 * 1024;

let dir: string;
let stateDir: string;
let store: InboxStore;
let receiver: WebhookReceiver | undefined;
let delivered: { delivery: WebhookDelivery; webhookId: string }[];
let capture: ReturnType<typeof captureLogger>;
let secret: string;
let counter = 0;

async function startReceiver(configured: string[] = []): Promise<WebhookReceiver> {
  capture = captureLogger('debug');
  receiver = await WebhookReceiver.start({
    host: '127.0.0.1',
    port: 0,
    path: PATH,
    maxBodyBytes: MAX,
    toleranceMs: 5 * 60_000,
    secrets: new SecretRing(webhookSecretsDir(stateDir), configured, capture.log),
    remember: (id, type) => store.rememberWebhook(id, type, 86_400_000),
    onDelivery: (delivery, webhookId) => {
      delivered.push({ delivery, webhookId });
    },
    log: capture.log,
  });
  return receiver;
}

function body(id: string, data: Record<string, unknown> = { jobId: 'job_1', status: 'COMPLETED' }): string {
  return JSON.stringify({ id, type: 'job.status.changed', timestamp: new Date().toISOString(), data });
}

function signed(text: string, options: { secret?: string; id?: string; at?: Date } = {}) {
  const id = options.id ?? `msg_${++counter}`;
  const at = options.at ?? new Date();
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(options.secret ?? secret).sign(id, at, text),
  };
}

async function post(text: string | Readable, headers: Record<string, string>, url = receiver!.url) {
  const res = await request(url, { method: 'POST', headers, body: text });
  const answer = await res.body.text();
  return { status: res.statusCode, body: answer ? JSON.parse(answer) : undefined };
}

/**
 * Nothing was handed over: a refused delivery schedules no work, and the work of an accepted one
 * starts on the turn after its answer, long before this wait ends. Only for checks that nothing
 * came; what must come is waited for (waitFor).
 */
const settle = () => new Promise((r) => setTimeout(r, 30));

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhook-'));
  stateDir = path.join(dir, 'state');
  store = SqliteInboxStore.open(path.join(stateDir, 'inbox.sqlite'), new ManualClock(Date.now()));
  delivered = [];
  secret = newWebhookSecret();
  storeWebhookSecret(stateDir, 'wh_1', secret);
});

afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('webhook receiver', () => {
  it('answers a genuine delivery 202 and hands it over after the answer', async () => {
    await startReceiver();
    const text = body('msg_a');
    const headers = signed(text, { id: 'msg_a' });
    const answer = await post(text, headers);
    expect(answer).toEqual({ status: 202, body: { status: 'accepted' } });
    await waitFor(() => delivered.length > 0);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ webhookId: 'msg_a', delivery: { type: 'job.status.changed' } });
    const line = capture.lines().find((l) => l['msg'] === 'webhook accepted');
    expect(line).toMatchObject({ webhookId: 'msg_a', eventType: 'job.status.changed', jobId: 'job_1' });
  });

  it('answers 503 while the ids seen cannot be read (the sender retries), and 202 once they can', async () => {
    let down = true;
    const real = store;
    store = Object.assign(Object.create(real), {
      rememberWebhook: async (...args: Parameters<typeof real.rememberWebhook>) => {
        if (down) throw new Error('the database is unreachable');
        return real.rememberWebhook(...args);
      },
    });
    try {
      await startReceiver();
      const text = body('msg_db');
      expect(await post(text, signed(text, { id: 'msg_db' }))).toEqual({
        status: 503,
        body: { error: 'store-unavailable' },
      });
      await settle();
      expect(delivered).toHaveLength(0);
      expect(receiver!.counts).toEqual({ accepted: 0, rejected: 1 });
      down = false;
      expect((await post(text, signed(text, { id: 'msg_db' }))).status).toBe(202);
      await waitFor(() => delivered.length > 0);
      expect(delivered).toHaveLength(1);
    } finally {
      store = real;
    }
  });

  it('refuses a forged signature with 401 and logs neither the signature nor the secret', async () => {
    await startReceiver();
    const text = body('msg_forged');
    const headers = signed(text, { secret: newWebhookSecret() });
    expect((await post(text, headers)).status).toBe(401);
    // A body changed after signing is as forged.
    const good = signed(text);
    expect((await post(text.replace('job_1', 'job_2'), good)).status).toBe(401);
    await settle();
    expect(delivered).toHaveLength(0);
    const raw = capture.raw();
    expect(raw).toContain('bad-signature');
    expect(raw).not.toContain(headers['webhook-signature'].slice(3));
    expect(raw).not.toContain(secret.slice(6));
  });

  it('refuses a timestamp more than the tolerance old or ahead, before reading the body', async () => {
    await startReceiver();
    const text = body('msg_old');
    const old = signed(text, { at: new Date(Date.now() - 6 * 60_000) });
    expect(await post(text, old)).toEqual({ status: 401, body: { error: 'stale-timestamp' } });
    const ahead = signed(text, { at: new Date(Date.now() + 6 * 60_000) });
    expect((await post(text, ahead)).status).toBe(401);
    const missing = { 'content-type': 'application/json', 'webhook-id': 'x' };
    expect((await post(text, missing)).status).toBe(400);
    await settle();
    expect(delivered).toHaveLength(0);
  });

  it('refuses an oversized body with 413, whether its length is declared or only streamed', async () => {
    await startReceiver();
    const big = body('msg_big', { jobId: 'job_1', padding: 'x'.repeat(MAX * 2) });
    expect((await post(big, signed(big))).status).toBe(413);
    // Chunked, no Content-Length: counted while read, refused once over the limit.
    const chunks = Readable.from([Buffer.from(big.slice(0, MAX)), Buffer.from(big.slice(MAX))]);
    expect((await post(chunks, signed(big))).status).toBe(413);
    await settle();
    expect(delivered).toHaveLength(0);
    // The receiver still answers afterwards.
    const small = body('msg_small');
    expect((await post(small, signed(small))).status).toBe(202);
  });

  it('acknowledges a repeated webhook-id without doing the work again, also after a restart', async () => {
    await startReceiver();
    const text = body('msg_r');
    const headers = signed(text, { id: 'msg_r' });
    expect((await post(text, headers)).status).toBe(202);
    expect(await post(text, headers)).toEqual({ status: 200, body: { status: 'duplicate' } });
    await receiver!.stop();
    await startReceiver();
    expect((await post(text, signed(text, { id: 'msg_r' }))).status).toBe(200);
    await settle();
    expect(delivered).toHaveLength(1);
  });

  it('accepts a header carrying several signatures when one of them matches', async () => {
    await startReceiver();
    const text = body('msg_multi');
    const headers = signed(text, { id: 'msg_multi' });
    const other = new Webhook(newWebhookSecret()).sign('msg_multi', new Date(), text);
    headers['webhook-signature'] = `v1a,nonsense ${other} ${headers['webhook-signature']}`;
    expect((await post(text, headers)).status).toBe(202);
  });

  it('picks up a reset secret without a restart and still accepts the replaced one', async () => {
    await startReceiver();
    const rotated = newWebhookSecret();
    storeWebhookSecret(stateDir, 'wh_1', rotated);
    const a = body('msg_new');
    expect((await post(a, signed(a, { secret: rotated }))).status).toBe(202);
    const b = body('msg_old_secret');
    expect((await post(b, signed(b, { secret }))).status).toBe(202);
    // A second reset drops the first secret.
    storeWebhookSecret(stateDir, 'wh_1', newWebhookSecret());
    const c = body('msg_dropped');
    expect((await post(c, signed(c, { secret }))).status).toBe(401);
  });

  it('reads the secrets again after a signature matched none, so a secret changed unseen still passes', async () => {
    const file = path.join(webhookSecretsDir(stateDir), 'wh_1.secret');
    // Whole seconds: the same mtime can be set again below.
    utimesSync(file, 1_800_000_000, 1_800_000_000);
    await startReceiver();
    const before = body('msg_before');
    expect((await post(before, signed(before, { id: 'msg_before' }))).status).toBe(202);
    // Rewritten in place: same inode, same size, mtime set back. No change check can see that.
    const replaced = newWebhookSecret();
    expect(replaced.length).toBe(secret.length);
    writeFileSync(file, `${replaced}\n`);
    utimesSync(file, 1_800_000_000, 1_800_000_000);
    const text = body('msg_after');
    expect((await post(text, signed(text, { id: 'msg_after', secret: replaced }))).status).toBe(202);
  });

  it('accepts a secret from the configuration, and answers 503 while no secret exists at all', async () => {
    rmSync(webhookSecretsDir(stateDir), { recursive: true });
    await startReceiver();
    const text = body('msg_none');
    expect((await post(text, signed(text))).status).toBe(503);
    await receiver!.stop();
    await startReceiver([secret]);
    expect((await post(text, signed(text))).status).toBe(202);
  });

  it('answers 404 off its path and 405 to another method', async () => {
    await startReceiver();
    const text = body('msg_p');
    expect((await post(text, signed(text), receiver!.url.replace(PATH, '/other'))).status).toBe(404);
    const res = await request(receiver!.url, { method: 'GET' });
    await res.body.dump();
    expect(res.statusCode).toBe(405);
  });

  it('a sender that goes away in the middle of the body costs nothing and the next delivery passes', async () => {
    await startReceiver();
    const text = body('msg_cut');
    const headers = signed(text, { id: 'msg_cut' });
    const url = new URL(receiver!.url);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((r) => socket.once('connect', r));
    const head = Object.entries({ ...headers, host: url.host, 'content-length': String(text.length) })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n');
    socket.write(`POST ${url.pathname} HTTP/1.1\r\n${head}\r\n\r\n${text.slice(0, 20)}`);
    await new Promise((r) => setTimeout(r, 30));
    socket.destroy();
    await settle();
    expect(delivered).toHaveLength(0);
    // The id was never handled: the sender's retry of the same delivery is accepted.
    expect((await post(text, headers)).status).toBe(202);
    await waitFor(() => capture.raw().includes('went away mid-body'));
  });
});
