import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storeWebhookSecret } from '../../src/returns/webhook-secrets.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';

const SEED_DIR = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/', import.meta.url));
const SEEDED = readdirSync(SEED_DIR).filter((f) => f.endsWith('.xml')).length;

let h: Harness;

beforeAll(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.stopAgents();
});
afterAll(async () => {
  await h.cleanup();
});

describe('the agent with its inbox and webhook receiver', () => {
  it('saves the incoming documents, and webhooks nudge the follower and poll the inbox', async () => {
    const inbox = path.join(h.dir, 'out', 'peppol-inbox');
    const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
      peppolInbox: { target: { type: 'local', path: inbox } },
      // Port 0: the receiver's own port, read back below (a port picked beforehand can be taken meanwhile).
      webhooks: { enabled: true, listen: '127.0.0.1:0' },
    });
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const xmls = () => (existsSync(inbox) ? readdirSync(inbox).filter((f) => f.endsWith('.xml')) : []);
    await waitFor(() => xmls().length === SEEDED);

    // Every nudge the webhooks cause is recorded through the follower the agent runs.
    const nudged: string[] = [];
    const follower = agent.returns!.follower;
    const recordNudge = follower.recordNudge.bind(follower);
    follower.recordNudge = (jobId: string) => {
      nudged.push(jobId);
      return recordNudge(jobId);
    };

    const created = await h.client.webhooks.create({
      url: agent.inbound!.receiver!.url,
      eventTypes: ['sending.event.status.changed', 'peppol.document.received'],
    });
    storeWebhookSecret(config.stateDir, created.id, created.secret!);

    h.drop('pdf', 'invoice-9.pdf', await makePdf('invoice 9'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);
    const jobId = (await h.jobs()).find((j) => j.filename === 'invoice-9.pdf')!.id;
    // The sandbox clock moves on (at most 100 s, in 2 s steps) until the job's events are due; the
    // delivery itself is real HTTP, waited for in real time, not in a count of turns.
    let moved = 0;
    await waitFor(async () => {
      if (nudged.includes(jobId)) return true;
      if (moved < 100_000) {
        await h.advance(2_000);
        moved += 2_000;
      }
      return false;
    });
    expect(nudged).toContain(jobId);

    const xml = readFileSync(path.join(SEED_DIR, 'base-example.xml'), 'utf8');
    const added = await h.sandbox.control('POST', '/peppol-documents', { xml });
    await waitFor(() => xmls().some((f) => f.endsWith(`_${added.body.id}.xml`)));
    expect(xmls()).toHaveLength(SEEDED + 1);
  });
});
