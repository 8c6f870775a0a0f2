/**
 * The follower against the sandbox's injected rate limits: a 503 with Retry-After as an HTTP date
 * on the event list and a 429 with Retry-After in seconds on the download URLs. It must halve its
 * concurrency, start no call before the time each Retry-After names, then speed up again and
 * archive every proof once. Default pacing (concurrency auto, no call budget).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isApiError } from '../../src/api/errors.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { countingClient } from './support/counting-client.js';
import { day, finalWithProofs, proofsOf, pump, returnsConfig } from './support/returns-harness.js';

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

describe('follower pacing against the sandbox', () => {
  it('halves on 503 and 429, starts no call before their Retry-After (HTTP date, seconds), then grows again and archives every proof', async () => {
    const listResumesAt = Math.ceil((h.clock.now() + 15_000) / 1000) * 1000;
    for (const fault of [
      {
        route: '/sending-events',
        method: 'GET',
        failNext: 1,
        status: 503,
        retryAfter: new Date(listResumesAt).toUTCString(),
      },
      {
        route: '/sending-events/:id/files/:fileReference/download-url',
        burst429: { count: 1, retryAfterSeconds: 10 },
      },
    ]) {
      expect((await h.sandbox.control('POST', '/faults', fault)).status).toBe(201);
    }
    const { client, log } = countingClient(h.client, h.clock);
    // When each refusal came back (the pacing hears of it in the same turn of the event loop).
    const refusals: { status: number; at: number; resumesAt?: number }[] = [];
    const watch =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await call(...args);
        } catch (err) {
          if (isApiError(err) && (err.status === 429 || err.status === 503)) {
            const at = h.clock.now();
            refusals.push({
              status: err.status,
              at,
              ...(err.retryAfterMs === undefined ? {} : { resumesAt: at + err.retryAfterMs }),
            });
          }
          throw err;
        }
      };
    const se = client.sendingEvents!;
    const watched = {
      ...client,
      sendingEvents: { ...se, list: watch(se.list), downloadUrl: watch(se.downloadUrl) },
    };
    const agent = await h.startAgent(h.config(folder, { returns: returnsConfig(h) }), {
      client: watched,
      returns: { maxSleepMs: 2 },
    });
    const pacing = agent.returns!.follower.gate.pacing;
    const start = pacing.limit();
    expect(start).toBe(4);
    const today = day(h.clock.now());
    const names = Array.from({ length: 8 }, (_, i) => `paced-${i}.pdf`);
    for (const name of names) h.drop('pdf', name, await makePdf(name));
    await waitFor(async () => (await agent.journal.stats()).files.done === names.length, 15_000);

    const statuses = await pump(
      h,
      () => {
        const all = names.map((n) => finalWithProofs(h, `${today}/${n}.status.json`));
        return all.every(Boolean) ? all : undefined;
      },
      { timeoutMs: 50_000 },
    );
    await agent.stop();

    expect(refusals.map((r) => r.status).sort()).toEqual([429, 503]);
    // Slowed down: one halving per refusal...
    const slowed = h.logs.filter((l) => l['msg'] === 'the service asks for fewer calls: follower slows down');
    expect(slowed.map((l) => l['status']).sort()).toEqual([429, 503]);
    for (const l of slowed) expect(l['concurrency']).toBe(Math.floor((l['was'] as number) / 2));
    const lowest = Math.min(...slowed.map((l) => l['concurrency'] as number));
    // ...and no call started while a Retry-After held (seconds and HTTP date alike)...
    for (const refusal of refusals) {
      expect(refusal.resumesAt).toBeGreaterThan(refusal.at);
      const during = log.calls.filter((c) => c.at > refusal.at && c.at < refusal.resumesAt!);
      expect(during).toEqual([]);
    }
    const list = refusals.find((r) => r.status === 503)!;
    expect(list.resumesAt).toBe(listResumesAt);
    // ...then it grew again while answers were good, and every proof came, each once.
    expect(pacing.limit()).toBeGreaterThan(lowest);
    const proofs = statuses.flatMap((s) => proofsOf(s!));
    expect(proofs).toHaveLength(names.length * 2);
    expect(log.count('download')).toBe(proofs.length);
  }, 60_000);
});
