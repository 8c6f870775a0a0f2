import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Papa from 'papaparse';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { DocexClient } from '../../src/api/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import { type Harness, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { countingClient } from './support/counting-client.js';
import {
  day,
  finalWithProofs,
  proofDir,
  proofsOf,
  pump,
  returnsConfig,
  statusDir,
} from './support/returns-harness.js';

let h: Harness;

beforeAll(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.sandbox.control('DELETE', '/faults').catch(() => {});
  await h.stopAgents();
});
afterAll(async () => {
  await h.cleanup();
});

const folder = [{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }];

describe('following under faults and limits', () => {
  it('ends with every status, proof and CSV row in place, each once, with a 20% fault rate on the routes it uses', async () => {
    for (const route of [
      '/jobs/:id',
      '/sending-events',
      '/sending-events/:id/files/:fileReference/download-url',
      '/download/:blobId',
    ]) {
      // The first call of each route fails for sure, so the faults bite in every run, not almost every.
      const answer = await h.sandbox.control('POST', '/faults', {
        route,
        errorRate: 0.2,
        failNext: 1,
        status: 503,
      });
      expect(answer.status).toBe(201);
    }
    // No retries inside the client: every injected fault reaches the follower, which must cope.
    const raw = new DocexClient(
      sandboxClientOptions(h.sandbox.sandbox, { clock: h.clock, retry: { maxAttempts: 1 } }),
    );
    onTestFinished(() => raw.close());
    const { client, log } = countingClient(raw, h.clock);
    const config = h.config(folder, {
      returns: returnsConfig(
        h,
        {},
        { statuses: { target: { type: 'local', path: statusDir(h) }, dailyCsvSchedule: '* * * * * *' } },
      ),
    });
    const agent = await h.startAgent(config, { client, returns: { maxSleepMs: 2 } });
    const today = day(h.clock.now());
    const names = Array.from({ length: 6 }, (_, i) => `faulty-${i}.pdf`);
    for (const name of names) h.drop('pdf', name, await makePdf(name));
    await waitFor(async () => (await agent.journal.stats()).files.done === names.length, 15_000);

    const statuses = await pump(
      h,
      () => {
        const all = names.map((n) => finalWithProofs(h, `${today}/${n}.status.json`));
        return all.every(Boolean) ? all : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const proofs = statuses.flatMap((s) => proofsOf(s!)) as string[];
    expect(proofs).toHaveLength(names.length * 2);
    for (const proof of proofs) {
      expect(
        readFileSync(path.join(proofDir(h), proof))
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
    }
    expect(log.count('download')).toBe(proofs.length);
    // The faults did bite: some polls or downloads failed and were tried again.
    expect(
      h.logs.some(
        (l) =>
          l['msg'] === 'job poll failed: tried again later' ||
          l['msg'] === 'proof download failed: tried again later',
      ),
    ).toBe(true);

    await h.advance(86_400_000);
    const csvFile = path.join(statusDir(h), `statuses-${today}.csv`);
    await pump(h, () => existsSync(csvFile));
    const rows = Papa.parse<Record<string, string>>(readFileSync(csvFile, 'utf8'), {
      header: true,
      skipEmptyLines: true,
    }).data;
    const ours = rows.filter((r) => names.includes(r['file']!));
    expect(ours.map((r) => r['file']).sort()).toEqual([...names].sort());
    expect(new Set(rows.map((r) => r['sendingEventId'])).size).toBe(rows.length);
    await agent.stop();
  });

  it('polls a job only every intervalWhileWebhooksMs while webhooks arrive', async () => {
    const agent = await h.startAgent(
      h.config(folder, { returns: returnsConfig(h, { intervalWhileWebhooksMs: 600_000 }) }),
      { returns: { maxSleepMs: 2 } },
    );
    const follower = agent.returns!.follower;
    follower.webhooksActive();
    h.drop('pdf', 'quiet.pdf', await makePdf('quiet'));
    const item = await waitFor(async () =>
      (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'quiet.pdf'))).find(
        (i) => i.state === 'done',
      ),
    );
    const jobId = item.jobId!;
    const polled = await pump(h, async () => {
      const job = await agent.returns!.store.job(jobId);
      return job && job.polls >= 1 ? job : undefined;
    });
    expect(polled.nextPollAt - h.clock.now()).toBeGreaterThan(590_000);
    await agent.stop();
  });

  it('starts no more than follow.maxCallsPerMinute API calls in any minute', async () => {
    const { client, log } = countingClient(h.client, h.clock);
    const max = 5;
    const agent = await h.startAgent(
      h.config(folder, { returns: returnsConfig(h, { maxCallsPerMinute: max }) }),
      {
        client,
        returns: { maxSleepMs: 2 },
      },
    );
    const today = day(h.clock.now());
    const names = ['limited-1.pdf', 'limited-2.pdf', 'limited-3.pdf'];
    for (const name of names) h.drop('pdf', name, await makePdf(name));
    await waitFor(async () => (await agent.journal.stats()).files.done >= names.length);
    const started = log.calls.length;
    await pump(h, () => names.every((n) => finalWithProofs(h, `${today}/${n}.status.json`)), {
      stepMs: 3000,
      pauseMs: 5,
      timeoutMs: 30_000,
    });
    await agent.stop();
    // Calls the follower starts (downloads counted when they start).
    const calls = log.calls.slice(started).filter((c) => c.route !== 'download');
    expect(calls.length).toBeGreaterThan(max * 2);
    for (const call of calls) {
      const inWindow = calls.filter((c) => c.at > call.at - 60_000 && c.at <= call.at).length;
      expect(inWindow).toBeLessThanOrEqual(max);
    }
    // It took several minutes of (clock) time, as the bound demands.
    expect(calls[calls.length - 1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(60_000);
  });
});
