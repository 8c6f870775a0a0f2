/**
 * Two agents on one PostgreSQL journal behind a load balancer: each runs its own webhook receiver
 * with its own inbox store (its own pool) on the shared database. The same signed delivery posted
 * to both at once, over real HTTP, is handled once: one answers 202 and does the work, the other
 * answers 200 `duplicate`; a retry later is a duplicate on either.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { PostgresInboxStore } from '../../src/returns/postgres/inbox-store.js';
import { WebhookReceiver } from '../../src/returns/webhook-receiver.js';
import { SecretRing, storeWebhookSecret, webhookSecretsDir } from '../../src/returns/webhook-secrets.js';
import { newWebhookSecret } from '../../src/sandbox/routes/webhooks.js';
import { captureLogger } from '../api/support/log-capture.js';
import { describePostgres, testDatabase } from '../support/postgres.js';

const DAY_MS = 86_400_000;

describePostgres('a webhook delivered to two agents on one journal at once', () => {
  let dir: string;
  const stores: PostgresInboxStore[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhook-two-'));
  });

  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.stop();
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function agentReceiver(url: string, name: string, secret: string, handled: string[]) {
    const stateDir = path.join(dir, name);
    storeWebhookSecret(stateDir, 'wh_1', secret);
    const { log } = captureLogger('debug');
    const store = await PostgresInboxStore.open(postgresConnection(url), new ManualClock(Date.now()), log);
    stores.push(store);
    const receiver = await WebhookReceiver.start({
      host: '127.0.0.1',
      port: 0,
      path: '/docex/webhooks',
      maxBodyBytes: 16 * 1024,
      toleranceMs: 5 * 60_000,
      secrets: new SecretRing(webhookSecretsDir(stateDir), [], log),
      seen: (id) => store.webhookSeen(id),
      remember: (id, type) => store.rememberWebhook(id, type, DAY_MS),
      onDelivery: (_delivery, webhookId) => {
        handled.push(`${name}:${webhookId}`);
      },
      log,
    });
    receivers.push(receiver);
    return receiver;
  }

  it('handles it on exactly one agent, the other answering duplicate, in each of many rounds', async () => {
    const url = await testDatabase();
    const secret = newWebhookSecret();
    const handled: string[] = [];
    const a = await agentReceiver(url, 'a', secret, handled);
    const b = await agentReceiver(url, 'b', secret, handled);
    const post = async (to: WebhookReceiver, id: string) => {
      const text = JSON.stringify({
        id,
        type: 'job.status.changed',
        timestamp: new Date().toISOString(),
        data: { jobId: `job_${id}`, status: 'COMPLETED' },
      });
      const at = new Date();
      const res = await request(to.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign(id, at, text),
        },
        body: text,
      });
      return { status: res.statusCode, body: (await res.body.json()) as { status: string } };
    };

    const ROUNDS = 25;
    for (let round = 0; round < ROUNDS; round++) {
      const id = `msg_${round}`;
      const answers = await Promise.all([post(a, id), post(b, id)]);
      expect(answers.map((x) => x.status).sort(), id).toEqual([200, 202]);
      expect(answers.find((x) => x.status === 200)?.body).toEqual({ status: 'duplicate' });
    }
    // The work after the answer: once per delivery, on whichever agent answered 202.
    await expect.poll(() => handled.length).toBe(ROUNDS);
    expect(new Set(handled.map((h) => h.split(':')[1])).size).toBe(ROUNDS);
    // The sender's retry, to either agent: a duplicate.
    expect((await post(a, 'msg_0')).body).toEqual({ status: 'duplicate' });
    expect((await post(b, 'msg_0')).body).toEqual({ status: 'duplicate' });
    expect(handled).toHaveLength(ROUNDS);
  });
});
