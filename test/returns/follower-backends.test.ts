/**
 * The follower over each backend of its store: a job from the journal feed followed to its end
 * against a scripted service, its proof downloaded, its status file final and its day's CSV
 * written, with the returns store on SQLite files and in PostgreSQL (opened as the agent opens it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { DoneJobItem, JournalLocation } from '../../src/journal/index.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { Follower } from '../../src/returns/follower.js';
import type { JournalFeed } from '../../src/returns/journal-feed.js';
import { openReturnsReader, openReturnsStore } from '../../src/returns/open-stores.js';
import { utcDay } from '../../src/returns/proof-names.js';
import { csvFileName } from '../../src/returns/status-csv.js';
import type { StatusDocument } from '../../src/returns/status-files.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { proofDoc, scriptedClient, scriptedConfig } from './support/scripted.js';

const PROOF = Buffer.from('%PDF-1.7 proof\n');

function feedOf(items: DoneJobItem[]): JournalFeed {
  return {
    after: async (cursor: number) => items.filter((i) => i.cursor > cursor),
  } as unknown as JournalFeed;
}

function followsToTheEnd(place: () => Promise<{ location: JournalLocation; stateDir: string }>): void {
  const dirs: string[] = [];
  let store: ReturnsStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('follows a job from the feed to its end: proof, final status file and the daily CSV', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follower-backends-'));
    dirs.push(dir);
    const { location, stateDir } = await place();
    const clock = new ManualClock();
    const t0 = clock.now();
    store = await openReturnsStore(location, stateDir, clock);
    const client = scriptedClient({ documents: () => [proofDoc('ref-a.pdf', PROOF.length)] });
    client.sendingEvents.downloadUrl = async () => ({ url: 'https://files.example/ref-a' }) as never;
    client.sendingEvents.downloadFile = async (_url: string, file: string) => {
      writeFileSync(file, PROOF);
      return { md5: 'md5', size: PROOF.length };
    };
    const statuses = path.join(dir, 'statuses');
    const proofs = path.join(dir, 'proofs');
    const follower = new Follower({
      store,
      feed: feedOf([
        {
          cursor: 1,
          itemId: 1,
          rowIndex: undefined,
          label: undefined,
          jobId: 'job_1',
          jobName: undefined,
          doneAt: t0,
          source: { itemId: 1, folder: 'pdf', fileName: 'inv-1.pdf', sha256: 'ab', claimedAt: t0 },
        },
      ]),
      client,
      config: scriptedConfig,
      statusTarget: new LocalTarget(statuses),
      proofTarget: new LocalTarget(proofs),
      stateDir: dir,
      clock,
      log: silentLogger(),
      maxSleepMs: 2,
    });
    const statusFile = path.join(statuses, utcDay(t0), 'inv-1.pdf.status.json');
    const status = (): StatusDocument | undefined =>
      existsSync(statusFile) ? JSON.parse(readFileSync(statusFile, 'utf8')) : undefined;
    follower.start();
    try {
      const end = Date.now() + 15_000;
      while (!status()?.final && Date.now() < end) {
        clock.advance(5_000);
        await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      await follower.stop();
    }
    const written = status();
    expect(written?.final).toBe(true);
    const proof = written!.jobs[0]!.sendingEvents[0]!.documents[0]!.proof!;
    expect(readFileSync(path.join(proofs, proof))).toEqual(PROOF);
    expect(await store.counts()).toMatchObject({
      jobs: 1,
      open: 0,
      events: 1,
      documents: 1,
      documentsDone: 1,
    });

    const day = utcDay(clock.now());
    expect(await follower.writeDueCsvs(clock.now() + 86_400_000)).toEqual([day]);
    const csv = readFileSync(path.join(statuses, csvFileName(day)), 'utf8')
      .trim()
      .split('\n');
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain('se_1');

    const reader = openReturnsReader(location, stateDir, { busyTimeoutMs: 2000 });
    try {
      expect(await reader.proofsArchived()).toBe(1);
      expect((await reader.followedJob('job_1'))?.documents.map((d) => d.state)).toEqual(['done']);
    } finally {
      await reader.close();
    }
  });
}

describe('the follower with its store on SQLite files', () => {
  followsToTheEnd(async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'docex-follower-state-'));
    return { location: { kind: 'sqlite', file: path.join(stateDir, 'journal.sqlite') }, stateDir };
  });
});

describePostgres('the follower with its store in PostgreSQL', () => {
  followsToTheEnd(async () => ({
    location: { kind: 'postgres', connection: { url: await testDatabase(), poolSize: 4, timeoutMs: 10_000 } },
    stateDir: '/nonexistent/state',
  }));
});
