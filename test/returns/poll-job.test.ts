/**
 * One poll of one job against a scripted client and a real returns.sqlite: proof names of
 * documents that share a type, and a 404 right after an upload.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { HostPace } from '../../src/api/host-pace.js';
import { Pacing } from '../../src/api/pacing.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Job, SendingEvent, SendingEventDocument } from '../../src/domain/wire.js';
import { CallGate } from '../../src/returns/call-gate.js';
import { type FollowClient, NOT_FOUND_GRACE_MS, type PollDeps, pollJob } from '../../src/returns/poll-job.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { oneJobStore, proofDoc, scriptedClient, scriptedConfig } from './support/scripted.js';

let dir: string;
let store: ReturnsStore;
const clock = new ManualClock();
const T0 = clock.now();

beforeEach(async () => {
  clock.set(T0);
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-poll-job-'));
  store = await oneJobStore(dir, T0);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function deps(client: FollowClient): PollDeps {
  return {
    client,
    store,
    gate: new CallGate(
      new HostPace(clock, new Pacing({ concurrency: 4 }), silentLogger(), { maxSleepMs: 1 }),
    ),
    config: scriptedConfig,
    log: silentLogger(),
    now: () => clock.now(),
    webhooksActive: () => false,
  };
}

const proof = (ref: string) => proofDoc(ref);
const clientWith = (documents: () => SendingEventDocument[], jobGet?: () => Promise<Job>) =>
  scriptedClient({ documents, ...(jobGet ? { jobGet } : {}) });

const paths = async () => (await store.documentsOfEvent('se_1')).map((d) => [d.fileReference, d.path]);

describe('one poll of a job', () => {
  it('gives two documents of one type on one event two different proof names, the same on a re-poll', async () => {
    let docs = [proof('ref-a.pdf'), proof('ref-b.pdf')];
    const client = clientWith(() => docs);
    await pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!);
    const first = await paths();
    expect(new Set(first.map(([, p]) => p)).size).toBe(2);
    expect(first).toEqual([
      ['ref-a.pdf', '2026-11-21/inv-1/se_1-DELIVERY_PROOF.pdf'],
      ['ref-b.pdf', '2026-11-21/inv-1/se_1-DELIVERY_PROOF-ref-b.pdf'],
    ]);

    // The service lists them the other way round now: the names stay what they were.
    docs = [proof('ref-b.pdf'), proof('ref-a.pdf')];
    await pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!);
    expect(await paths()).toEqual(first);
  });

  it('adds a counter when even the file reference does not tell two documents apart', async () => {
    // `a:ref` and `a?ref` both become `a_ref` in a file name.
    const client = clientWith(() => [proof('ref.pdf'), proof('a:ref.pdf'), proof('a?ref.pdf')]);
    await pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!);
    expect(Object.fromEntries(await paths())).toEqual({
      'ref.pdf': '2026-11-21/inv-1/se_1-DELIVERY_PROOF.pdf',
      'a:ref.pdf': '2026-11-21/inv-1/se_1-DELIVERY_PROOF-a_ref.pdf',
      'a?ref.pdf': '2026-11-21/inv-1/se_1-DELIVERY_PROOF-a_ref-2.pdf',
    });
  });

  it('retries a job the service does not know within an hour of its upload, and gives it up after', async () => {
    const notFound = async (): Promise<Job> => {
      throw new ApiError('DOCEX_API_404', 'job not found', {
        status: 404,
        method: 'GET',
        route: '/jobs/{id}',
      });
    };
    const client = clientWith(() => [], notFound);
    await expect(
      pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!),
    ).rejects.toMatchObject({
      status: 404,
    });
    expect(await store.job('job_1')).toMatchObject({ done: false });
    expect((await store.job('job_1'))!.gaveUp).toBeUndefined();

    clock.advance(NOT_FOUND_GRACE_MS);
    const result = await pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!);
    expect(result.done).toBe(true);
    expect(await store.job('job_1')).toMatchObject({ done: true, status: 'NOT_FOUND' });
    expect((await store.job('job_1'))!.gaveUp).toContain('no longer knows');
  });

  it('records a job of many events page by page, and a poll cut off after a page is repeated whole', async () => {
    const total = 2500;
    const event = (i: number) =>
      ({
        id: `se_${String(i).padStart(5, '0')}`,
        jobId: 'job_1',
        status: 'SUCCESS',
        businessStatus: 'SUCCESS',
        documents: [proof(`ref-${i}.pdf`)],
      }) as SendingEvent;
    const all = Array.from({ length: total }, (_, i) => event(i));
    let failSecondPage = true;
    const listed: number[] = [];
    const base = scriptedClient();
    const client: FollowClient = {
      jobs: { get: async () => ({ id: 'job_1', status: 'COMPLETED', sendingEventCount: total }) as Job },
      sendingEvents: {
        ...base.sendingEvents,
        list: async (query: { after?: string; maxItems?: number }) => {
          const from = query.after ? all.findIndex((e) => e.id === query.after) + 1 : 0;
          listed.push(from);
          if (from > 0 && failSecondPage) throw new Error('the connection dropped');
          return { items: all.slice(from, from + (query.maxItems ?? 100)), totalItems: total } as never;
        },
      },
    };
    const versionBefore = (await store.source(1))!.version;
    await expect(
      pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!),
    ).rejects.toThrow();
    // The first page is in the store, with the file's status version moved; the job's row is not.
    expect((await store.counts()).events).toBe(1000);
    expect((await store.source(1))!.version).toBeGreaterThan(versionBefore);
    expect((await store.job('job_1'))!.done).toBe(false);

    failSecondPage = false;
    listed.length = 0;
    const result = await pollJob(deps(client), (await store.job('job_1'))!, (await store.source(1))!);
    expect(listed).toEqual([0, 1000, 2000]);
    expect(result.done).toBe(true);
    expect(await store.counts()).toMatchObject({ events: total, documents: total });
    expect((await store.job('job_1'))!.done).toBe(true);
  });
});
