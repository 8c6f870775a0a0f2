/**
 * One pace for every call to the sandbox host: a backlog dropped at once under a storm of 429s
 * (Retry-After in seconds) on the intake's creates and on the return path's download URLs. No file
 * fails for rate reasons, both callers back off and wait out each other's Retry-After, and every
 * proof comes. A folder's rate spaces its creates on the sandbox's clock.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { folderPaceKey } from '../../src/api/host-pace.js';
import type { ApiObserver } from '../../src/api/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { day, finalWithProofs, proofsOf, pump, returnsConfig } from '../returns/support/returns-harness.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, makeHarness, makePdf } from './support/agent-harness.js';

/** Files of the backlog: CI-sized (the bench's paced scenario runs 10,000). */
const BACKLOG = 300;

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

/** What the pace told the metrics: waits and backoffs by caller. */
function paceLog() {
  const waits: { caller: string; seconds: number }[] = [];
  const backoffs: { caller: string; status: number }[] = [];
  const observer: ApiObserver = {
    paceWait: (e) => waits.push(e),
    paceBackoff: (e) => backoffs.push(e),
  };
  return { observer, waits, backoffs };
}

describe('one pace for the intake and the return path, against the sandbox', () => {
  it(`a backlog of ${BACKLOG} files under a 429 storm: none fails, intake and return path both slow down and wait out each other's Retry-After, every proof comes`, async () => {
    for (const fault of [
      { route: '/jobs/single-file', method: 'POST', burst429: { count: 40, retryAfterSeconds: 2 } },
      {
        route: '/sending-events/:id/files/:fileReference/download-url',
        burst429: { count: 20, retryAfterSeconds: 3 },
      },
    ]) {
      expect((await h.sandbox.control('POST', '/faults', fault)).status).toBe(201);
    }
    const pace = paceLog();
    const agent = await h.startAgent(
      h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], { returns: returnsConfig(h) }),
      { returns: { maxSleepMs: 2 }, apiObserver: pace.observer },
    );
    const today = day(h.clock.now());
    const names = Array.from({ length: BACKLOG }, (_, i) => `backlog-${String(i).padStart(4, '0')}.pdf`);
    const pdf = await makePdf('paced');
    for (const name of names) h.drop('pdf', name, Buffer.concat([pdf, Buffer.from(`\n% ${name}\n`)]));

    // The clock moves (Retry-After pauses end, sending events run) until every proof is archived.
    const statuses = await pump(
      h,
      () => {
        const all = names.map((n) => finalWithProofs(h, `${today}/${n}.status.json`));
        return all.every(Boolean) ? all : undefined;
      },
      { timeoutMs: 240_000 },
    );
    const stats = await agent.journal.stats();
    await agent.stop();

    // No file failed: every one done, none in the error folder.
    expect(stats.files.done).toBe(BACKLOG);
    expect(stats.files.rejected).toBe(0);
    expect(readdirSync(path.join(h.dir, 'error', 'pdf')).filter((f) => !f.startsWith('.'))).toEqual([]);
    expect(statuses.flatMap((s) => proofsOf(s!))).toHaveLength(BACKLOG * 2);

    // Both callers heard 429s and halved the one concurrency...
    const callers = (list: { caller: string }[]) => [...new Set(list.map((e) => e.caller))].sort();
    expect(callers(pace.backoffs)).toEqual(['intake', 'returns']);
    const slowed = h.logs.filter((l) => String(l['msg']).startsWith('the service asks for fewer calls:'));
    expect(new Set(slowed.map((l) => l['msg']))).toEqual(
      new Set([
        'the service asks for fewer calls: intake slows down',
        'the service asks for fewer calls: follower slows down',
      ]),
    );
    for (const l of slowed) expect(l['concurrency']).toBeLessThanOrEqual(Math.max(1, l['was'] as number));
    // ...and both waited on the clock for a Retry-After (of their own or of the other caller).
    expect(callers(pace.waits.filter((w) => w.seconds >= 1))).toEqual(['intake', 'returns']);
  }, 300_000);

  it("a folder's rate (60/min) becomes the pace's limit of its calls, and its n-th create reaches the sandbox no sooner than n − 1 seconds of clock after the drop", async () => {
    const agent = await h.startAgent(
      h.config([{ name: 'slow', workflowId: SEED.workflows.pdfEmail, rate: '60/min' }], {
        stateDir: path.join(h.dir, 'state-rated'),
      }),
      { returns: { maxSleepMs: 2 } },
    );
    const before = new Set((await h.jobs()).map((j) => j.id));
    const pdf = await makePdf('rated');
    const droppedAt = h.clock.now();
    for (let i = 0; i < 5; i++)
      h.drop('slow', `rated-${i}.pdf`, Buffer.concat([pdf, Buffer.from(`\n% ${i}\n`)]));
    await pump(h, async () => (await agent.journal.stats()).files.done === 5, {
      stepMs: 250,
      timeoutMs: 60_000,
    });
    await waitFor(async () => (await agent.journal.stats()).files.done === 5, 1000);
    const created = (await h.jobs())
      .filter((j) => !before.has(j.id))
      // The control API answers the job records whole: their creation time on the sandbox's clock.
      .map((j) => Date.parse((j as typeof j & { createdAt: string }).createdAt))
      .sort((a, b) => a - b);
    expect(created).toHaveLength(5);
    // The folder's rate is the pace's limit of the folder's calls (its spacing: host-pace.test.ts).
    expect(agent.pace.pacing.keyLimits(folderPaceKey('slow'))).toHaveLength(1);
    // The pace starts the n-th create no sooner than n − 1 seconds after the drop; each reaches the
    // sandbox some time after its start (the pumped clock moves meanwhile), never before it.
    created.forEach((at, n) => {
      expect(at - droppedAt).toBeGreaterThanOrEqual(n * 1000);
    });
  }, 90_000);
});
