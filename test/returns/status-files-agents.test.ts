/**
 * Two agents' followers on one PostgreSQL returns store writing one status file into one shared
 * output folder: while one writes it (its text read from the store, its rename still to come), the
 * file's state moves on and the other agent's pass finds it stale. The other leaves it to the
 * writer, and the change is written at a later pass: the older text never lands last, the file
 * marked up to date (the ERP would keep a status that is no longer true). A file both agents listed
 * stale is written once: the second reads the store again under the file's lock.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import type { OutputTarget } from '../../src/outputs/types.js';
import { PostgresReturnsStore } from '../../src/returns/postgres/returns-store.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { writeStaleStatusFiles } from '../../src/returns/status-files.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { recordPolled } from './support/record-poll.js';

const T0 = 1_700_000_000_000;
const STATUS = statusFilePath('2026-11-27', 'inv-1.pdf', 1, false);

describePostgres('one status file written by two agents on one journal', () => {
  let dir: string;
  const stores: ReturnsStore[] = [];
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-status-agents-'));
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const poll = (store: ReturnsStore, businessStatus: string, at: number) =>
    recordPolled(
      store,
      {
        jobId: 'job_1',
        status: 'PROCESSING',
        jobJson: '{}',
        events: [
          {
            id: 'se_1',
            businessStatus,
            status: businessStatus,
            json: JSON.stringify({ id: 'se_1', businessStatus, status: businessStatus }),
          },
        ],
        nextPollAt: at + 60_000,
        unchangedPolls: 0,
        done: false,
        changed: true,
      },
      at,
    );

  const addJob = (store: ReturnsStore) =>
    store.addJobs(
      [
        {
          jobId: 'job_1',
          source: {
            itemId: 1,
            folder: 'pdf',
            fileName: 'inv-1.pdf',
            sha256: 'ab',
            claimedAt: T0,
            day: '2026-11-27',
          },
          statusPath: (collision) => statusFilePath('2026-11-27', 'inv-1.pdf', 1, collision),
          itemId: 1,
          rowIndex: undefined,
          label: undefined,
          jobName: undefined,
          recordedAt: T0,
          firstPollAt: T0,
        },
      ],
      'cursor',
      '1',
      T0,
    );

  it('leaves the file to the agent writing it, and the change that came meanwhile is written after', async () => {
    const url = await testDatabase();
    const [a, b] = [
      await PostgresReturnsStore.open(postgresConnection(url), T0),
      await PostgresReturnsStore.open(postgresConnection(url), T0),
    ];
    stores.push(a, b);
    await addJob(a);
    await poll(a, 'IN_PROGRESS', T0 + 1);
    // Agent A reads the file's text, then is slow to write it.
    const root = path.join(dir, 'statuses');
    const localA = new LocalTarget(root, { writer: 'aaaaaaaa' });
    let read: () => void = () => {};
    const textRead = new Promise<void>((resolve) => {
      read = resolve;
    });
    let go: () => void = () => {};
    const mayWrite = new Promise<void>((resolve) => {
      go = resolve;
    });
    const slowA: OutputTarget = {
      description: localA.description,
      write: async (p, content) => {
        let text = '';
        if (typeof content !== 'function') throw new Error('a status file is streamed');
        for await (const chunk of content()) text += String(chunk);
        read();
        await mayWrite;
        await localA.write(p, text);
      },
      exists: (p) => localA.exists(p),
      close: () => localA.close(),
    };
    const targetB = new LocalTarget(root, { writer: 'bbbbbbbb' });
    const passA = writeStaleStatusFiles(a, slowA);
    await textRead;
    // Meanwhile the event ends, and agent B's pass finds the file stale.
    await poll(b, 'SUCCESS', T0 + 2);
    const byB = await writeStaleStatusFiles(b, targetB);
    go();
    await passA;
    await writeStaleStatusFiles(b, targetB);
    const shown = JSON.parse(readFileSync(path.join(root, STATUS), 'utf8')) as {
      jobs: { sendingEvents: { businessStatus: string }[] }[];
    };
    expect(shown.jobs[0]!.sendingEvents[0]!.businessStatus).toBe('SUCCESS');
    expect(byB).toBe(0);
    expect(await b.staleSources(10)).toEqual([]);
  });

  it('writes a file two agents listed stale once: the agent whose lock comes after the other wrote it reads it up to date and leaves it', async () => {
    const url = await testDatabase();
    const [a, b] = [
      await PostgresReturnsStore.open(postgresConnection(url), T0),
      await PostgresReturnsStore.open(postgresConnection(url), T0),
    ];
    stores.push(a, b);
    await addJob(a);
    await poll(a, 'SUCCESS', T0 + 1);
    const root = path.join(dir, 'statuses');
    const targetA = new LocalTarget(root, { writer: 'aaaaaaaa' });
    const localB = new LocalTarget(root, { writer: 'bbbbbbbb' });
    const writesByB: string[] = [];
    const targetB: OutputTarget = {
      description: localB.description,
      write: (p, content) => {
        writesByB.push(p);
        return localB.write(p, content);
      },
      exists: (p) => localB.exists(p),
      close: () => localB.close(),
    };
    // Agent B lists the file stale; agent A writes it whole before B takes the file's lock.
    const listedFirst: ReturnsStore = Object.assign(Object.create(b) as ReturnsStore, {
      staleSources: async (limit: number) => {
        const listed = await b.staleSources(limit);
        expect(await writeStaleStatusFiles(a, targetA)).toBe(1);
        return listed;
      },
    });
    expect(await writeStaleStatusFiles(listedFirst, targetB)).toBe(0);
    expect(writesByB).toEqual([]);
    expect(await b.staleSources(10)).toEqual([]);
    expect(readFileSync(path.join(root, STATUS), 'utf8')).toContain('SUCCESS');
  });

  it('writes a status file through a journal pool of one connection (its lock holds one, its reads take another)', async () => {
    const store = await PostgresReturnsStore.open(
      postgresConnection(await testDatabase(), { poolSize: 1 }),
      T0,
    );
    stores.push(store);
    await addJob(store);
    await poll(store, 'SUCCESS', T0 + 1);
    const root = path.join(dir, 'statuses');
    expect(await writeStaleStatusFiles(store, new LocalTarget(root))).toBe(1);
    expect(readFileSync(path.join(root, STATUS), 'utf8')).toContain('SUCCESS');
  });
});
