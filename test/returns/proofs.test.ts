import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import type { StatusDocument } from '../../src/returns/status-files.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, listFiles, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { countingClient } from './support/counting-client.js';
import {
  day,
  finalWithProofs,
  proofDir,
  proofsOf,
  pump,
  readStatus,
  returnsConfig,
} from './support/returns-harness.js';

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

const folder = [{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }];

function allDone(statusPaths: string[]): StatusDocument[] | undefined {
  const statuses = statusPaths.map((p) => finalWithProofs(h, p));
  return statuses.every(Boolean) ? (statuses as StatusDocument[]) : undefined;
}

describe('delivery proofs', () => {
  it('downloads each proof exactly once while webhook nudges and scheduled polls both notice the final state', async () => {
    const { client, log } = countingClient(h.client, h.clock);
    const agent = await h.startAgent(h.config(folder, { returns: returnsConfig(h) }), {
      client,
      returns: { maxSleepMs: 2 },
    });
    const today = day(h.clock.now());
    const names = ['once-a.pdf', 'once-b.pdf', 'once-c.pdf'];
    for (const name of names) h.drop('pdf', name, await makePdf(name));
    await waitFor(async () => (await agent.journal.stats()).files.done === names.length);
    const follower = agent.returns!.follower;
    const jobIds = (await h.jobs()).filter((j) => names.includes(j.filename)).map((j) => j.id);

    const statuses = await pump(
      h,
      async () => {
        // What webhooks would do: every change announced, several times, while polls run.
        for (const jobId of jobIds) {
          follower.nudgeJob(jobId);
          follower.nudgeJob(jobId);
        }
        const events = await h.client.sendingEvents.list({});
        await Promise.all(
          events.items.filter((e) => jobIds.includes(e.jobId)).map((e) => follower.nudgeSendingEvent(e.id)),
        );
        return allDone(names.map((n) => `${today}/${n}.status.json`));
      },
      { stepMs: 500, pauseMs: 5 },
    );
    const proofs = statuses.flatMap(proofsOf);
    expect(proofs).toHaveLength(names.length * 2);
    for (const proof of proofs as string[]) {
      expect(existsSync(path.join(proofDir(h), proof))).toBe(true);
      const ref = path.basename(proof);
      expect(ref).toMatch(/-(DELIVERY_PROOF|SUBMISSION_REPORT)\.pdf$/);
    }
    // One download per document, however many times the job was polled.
    const downloads = log.calls.filter((c) => c.route === 'download');
    expect(downloads).toHaveLength(proofs.length);
    expect(new Set(downloads.map((d) => d.key)).size).toBe(proofs.length);
    expect(log.count('GET /sending-events')).toBeGreaterThan(names.length);
    await agent.stop();
  });

  it('asks for a new download URL when the first has expired, and writes the proof', async () => {
    let expireNext = true;
    const { client, log } = countingClient(h.client, h.clock, {
      afterDownloadUrl: async () => {
        if (!expireNext) return;
        expireNext = false;
        // The URL is valid 10 minutes: let 11 pass before it is used.
        await h.advance(11 * 60_000);
      },
    });
    // While a URL is held, only the jump above moves the clock: the pump must not expire a URL on
    // its own on a slow machine, or the count of URL requests below would depend on the load.
    let urlsHeld = 0;
    const se = client.sendingEvents!;
    const holding: typeof client = {
      ...client,
      sendingEvents: {
        ...se,
        downloadUrl: async (id, ref, options) => {
          const answer = await se.downloadUrl(id, ref, options);
          urlsHeld++;
          return answer;
        },
        downloadFile: async (url, target, options) => {
          try {
            return await se.downloadFile(url, target, options);
          } finally {
            urlsHeld--;
          }
        },
      },
    };
    const agent = await h.startAgent(h.config(folder, { returns: returnsConfig(h) }), {
      client: holding,
      returns: { maxSleepMs: 2 },
    });
    const today = day(h.clock.now());
    h.drop('pdf', 'expired-url.pdf', await makePdf('expired url'));
    const [status] = await pump(h, () => allDone([`${today}/expired-url.pdf.status.json`]), {
      mayAdvance: () => urlsHeld === 0,
    });
    expect(proofsOf(status!)).toHaveLength(2);
    for (const proof of proofsOf(status!) as string[]) {
      expect(
        readFileSync(path.join(proofDir(h), proof))
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
    }
    expect(expireNext).toBe(false);
    // Two documents, and a new URL for each one that expired (the clock jump may catch both).
    expect(log.count('download-url')).toBeGreaterThanOrEqual(3);
    expect(log.count('download-url')).toBeLessThanOrEqual(4);
    expect(log.count('download')).toBe(2);
    expect(h.logs.some((l) => l['msg'] === 'download URL expired: asking for a new one')).toBe(true);
    // Pre-signed URLs are secrets: no log line carries one.
    expect(JSON.stringify(h.logs)).not.toMatch(/signature=|\/download\/blob_/);
    expect(listFiles(path.join(h.dir, 'state', 'returns-tmp'))).toEqual([]);
    await agent.stop();
  });

  it('retries a proof the target could not take, leaving no partial file, and writes it once the folder works', async () => {
    const blocked = path.join(h.dir, 'out', 'blocked-proofs');
    mkdirSync(path.dirname(blocked), { recursive: true });
    // A file where the folder should be: every write fails (as a missing mount would).
    writeFileSync(blocked, 'not a folder');
    const agent = await h.startAgent(
      h.config(folder, {
        returns: returnsConfig(h, {}, { proofs: { target: { type: 'local', path: blocked } } }),
      }),
      { returns: { maxSleepMs: 2 } },
    );
    const today = day(h.clock.now());
    h.drop('pdf', 'blocked.pdf', await makePdf('blocked'));
    const failed = await pump(h, () =>
      h.logs.find((l) => l['msg'] === 'proof download failed: tried again later'),
    );
    // Logged with the document's fields; the write never reached a final name.
    expect(failed).toMatchObject({ folder: 'pdf', file: 'blocked.pdf', documentType: expect.any(String) });
    expect(readStatus(h, `${today}/blocked.pdf.status.json`)?.final).not.toBe(true);
    rmSync(blocked);
    const status = await pump(h, () => finalWithProofs(h, `${today}/blocked.pdf.status.json`));
    const proofs = proofsOf(status) as string[];
    expect(proofs).toHaveLength(2);
    expect(listFiles(blocked).sort()).toEqual(proofs.sort());
    await agent.stop();
  });

  it('loses and doubles nothing across restarts: mid-way, after a lost "done" record and after a lost feed cursor', async () => {
    const { client, log } = countingClient(h.client, h.clock);
    const config = h.config(folder, { returns: returnsConfig(h) });
    const start = () => h.startAgent(config, { client, returns: { maxSleepMs: 2 } });
    let agent = await start();
    const today = day(h.clock.now());
    const names = ['restart-1.pdf', 'restart-2.pdf', 'restart-3.pdf', 'restart-4.pdf'];
    for (const name of names) h.drop('pdf', name, await makePdf(name));
    await waitFor(async () => (await agent.journal.stats()).files.done >= names.length);
    const statusPaths = names.map((n) => `${today}/${n}.status.json`);
    // Stop as soon as the first proof is written, the rest still to come.
    await pump(h, () => log.count('download') > 0, { stepMs: 200, pauseMs: 2 });
    await agent.stop();
    const afterFirstRun = log.count('download');
    expect(afterFirstRun).toBeLessThan(names.length * 2);

    agent = await start();
    const statuses = await pump(h, () => allDone(statusPaths));
    await agent.stop();
    const proofs = statuses.flatMap(proofsOf);
    expect(proofs).toHaveLength(names.length * 2);
    expect(log.count('download')).toBe(proofs.length);

    // A crash between writing a proof and recording it: the file is in place, the store says `writing`.
    const store = new Database(path.join(h.dir, 'state', 'returns.sqlite'));
    const lost = store
      .prepare(`SELECT sending_event_id, file_reference, path FROM documents LIMIT 1`)
      .get() as {
      sending_event_id: string;
      file_reference: string;
      path: string;
    };
    store
      .prepare(
        `UPDATE documents SET state = 'writing', next_try_at = 0 WHERE sending_event_id = ? AND file_reference = ?`,
      )
      .run(lost.sending_event_id, lost.file_reference);
    // And a feed cursor that never reached the disk: the journal is read again from the start.
    store.prepare(`DELETE FROM meta`).run();
    store.close();
    const before = readFileSync(path.join(proofDir(h), lost.path));

    agent = await start();
    await pump(h, () => h.logs.some((l) => l['msg'] === 'proof found written before a restart'));
    await h.advance(5000);
    await new Promise((r) => setTimeout(r, 50));
    const doneFiles = (await agent.journal.stats()).files.done;
    await agent.stop();
    expect(log.count('download')).toBe(proofs.length);
    expect(readFileSync(path.join(proofDir(h), lost.path))).toEqual(before);
    const check = new Database(path.join(h.dir, 'state', 'returns.sqlite'), { readonly: true });
    const jobs = check.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number };
    const docs = check.prepare(`SELECT count(*) AS n FROM documents WHERE state = 'done'`).get() as {
      n: number;
    };
    check.close();
    expect(jobs.n).toBe(doneFiles);
    expect(docs.n).toBeGreaterThanOrEqual(proofs.length);
    for (const p of statusPaths) expect(readStatus(h, p)?.final).toBe(true);
  });
});
