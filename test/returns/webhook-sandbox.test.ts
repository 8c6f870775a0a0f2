import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocexClient } from '../../src/api/index.js';
import { peppolInboxSchema, webhooksSchema } from '../../src/config/inbound-schema.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { type Inbound, type Scheduler, scheduledPollDue, startInbound } from '../../src/returns/inbound.js';
import { storeWebhookSecret } from '../../src/returns/webhook-secrets.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import { startTestSandbox, type TestSandbox, until } from '../sandbox/sandbox-harness.js';

const SEED_DIR = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/', import.meta.url));

let t: TestSandbox;
let client: DocexClient;
let dir: string;
let inbound: Inbound | undefined;
let ticks: (() => void)[];

/** The cron schedule, fired by the test instead of the wall clock. */
const manualScheduler: Scheduler = (_expression, fn) => {
  ticks.push(fn);
  return { stop: () => undefined };
};

async function start(callbacks: Parameters<typeof startInbound>[0]['callbacks'] = {}) {
  const stateDir = path.join(dir, 'state');
  inbound = await startInbound({
    config: {
      stateDir,
      peppolInbox: peppolInboxSchema.parse({ target: { type: 'local', path: path.join(dir, 'inbox') } }),
      webhooks: webhooksSchema.parse({ enabled: true, listen: '127.0.0.1:0' }),
    },
    journal: { kind: 'sqlite', file: path.join(stateDir, 'journal.sqlite') },
    client,
    clock: systemClock,
    log: silentLogger(),
    callbacks,
    scheduler: manualScheduler,
  });
  return { stateDir, inbound };
}

const xmlFiles = () =>
  existsSync(path.join(dir, 'inbox'))
    ? readdirSync(path.join(dir, 'inbox')).filter((f) => f.endsWith('.xml'))
    : [];

describe('inbound part with the sandbox', () => {
  beforeEach(async () => {
    t = await startTestSandbox();
    client = new DocexClient(sandboxClientOptions(t.sandbox));
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-inbound-'));
    ticks = [];
  });

  afterEach(async () => {
    await inbound?.stop();
    inbound = undefined;
    await client.close();
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a real signed sandbox delivery of peppol.document.received is accepted and saves the document', async () => {
    let any = 0;
    const { stateDir, inbound: ib } = await start({ onAnyDelivery: () => any++ });
    // The start-up poll takes the seeded documents.
    await until(async () => (xmlFiles().length === 11 ? true : undefined));
    const created = await client.webhooks.create({
      url: ib.receiver!.url,
      eventTypes: ['peppol.document.received', 'job.status.changed', 'sending.event.status.changed'],
    });
    storeWebhookSecret(stateDir, created.id, created.secret!);

    const xml = readFileSync(path.join(SEED_DIR, 'base-creditnote-correction.xml'), 'utf8');
    const added = await t.control('POST', '/peppol-documents', { xml });
    expect(added.status).toBe(201);
    const documentId = added.body.id as string;
    // No scheduled poll runs: only the webhook can have brought it.
    await until(async () => (xmlFiles().some((f) => f.endsWith(`_${documentId}.xml`)) ? true : undefined));
    expect(any).toBeGreaterThanOrEqual(1);
    expect(ticks).toHaveLength(1);
  });

  it('sending-event and job deliveries reach the follower callbacks with their ids', async () => {
    const jobs: string[] = [];
    const events: { id: string; jobId: string | undefined }[] = [];
    const { stateDir, inbound: ib } = await start({
      onJobEvent: (jobId) => {
        jobs.push(jobId);
        return undefined;
      },
      onSendingEvent: (id, jobId) => {
        events.push({ id, jobId });
        return undefined;
      },
    });
    const created = await client.webhooks.create({
      url: ib.receiver!.url,
      eventTypes: ['job.status.changed', 'sending.event.status.changed'],
    });
    storeWebhookSecret(stateDir, created.id, created.secret!);
    const sample = JSON.parse(
      readFileSync(new URL('../../samples/payload-word/email.json', import.meta.url), 'utf8'),
    );
    const job = await client.jobs.createPayloadWord(sample);
    for (let i = 0; i < 20 && !events.some((e) => e.jobId === job.id); i++) {
      await t.advance(5_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    await until(async () => (events.some((e) => e.jobId === job.id) ? true : undefined));
    expect(events.find((e) => e.jobId === job.id)!.id).toMatch(/^se_/);
    await until(async () => (jobs.includes(job.id) ? true : undefined));
  });

  it('a webhook test delivery is acknowledged and counts as activity, without following made-up ids', async () => {
    let any = 0;
    const jobs: string[] = [];
    const { stateDir, inbound: ib } = await start({
      onAnyDelivery: () => any++,
      onJobEvent: (j) => {
        jobs.push(j);
        return undefined;
      },
    });
    const created = await client.webhooks.create({
      url: ib.receiver!.url,
      eventTypes: ['job.status.changed'],
    });
    storeWebhookSecret(stateDir, created.id, created.secret!);
    expect(await client.webhooks.test(created.id)).toEqual({ status: 202 });
    await until(async () => (any === 1 ? true : undefined));
    expect(jobs).toEqual([]);
  });
});

describe('scheduled Peppol polls while webhooks arrive', () => {
  const quiet = 3_600_000;
  it('poll on every tick without webhooks, and only once per quiet period while they arrive', () => {
    expect(scheduledPollDue(10_000_000, 9_999_000, undefined, quiet)).toBe(true);
    expect(scheduledPollDue(10_000_000, 9_999_000, 9_000_000, quiet)).toBe(false);
    expect(scheduledPollDue(10_000_000, 10_000_000 - quiet, 9_000_000, quiet)).toBe(true);
    expect(scheduledPollDue(10_000_000, 9_999_000, 10_000_000 - quiet - 1, quiet)).toBe(true);
    expect(scheduledPollDue(10_000_000, undefined, 9_999_000, quiet)).toBe(true);
  });
});
