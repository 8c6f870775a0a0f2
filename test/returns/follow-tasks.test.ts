import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/index.js';
import { returnsSchema } from '../../src/config/returns-schema.js';
import { INTERNAL_TRY_LIMIT } from '../../src/domain/retry-policy.js';
import { documentTask, type TaskContext } from '../../src/returns/follow-tasks.js';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { captureLogger } from '../api/support/log-capture.js';
import { recordPolled } from './support/record-poll.js';
import { addOneJob } from './support/store-fixtures.js';

let dir: string;
let store: ReturnsStore;
beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follow-tasks-'));
  store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), 0);
  await addOneJob(store);
  await recordPolled(
    store,
    {
      jobId: 'job_1',
      status: 'COMPLETED',
      jobJson: '{}',
      events: [{ id: 'se_1', businessStatus: 'DELIVERED', status: 'COMPLETED', json: '{}' }],
      documents: [
        {
          sendingEventId: 'se_1',
          fileReference: 'proof',
          jobId: 'job_1',
          type: 'DELIVERY_PROOF',
          name: 'proof.pdf',
          contentType: 'application/pdf',
          size: 10,
          path: '2026-11-21/a/se_1-proof.pdf',
          nextTryAt: 0,
        },
      ],
      nextPollAt: 1e12,
      unchangedPolls: 0,
      done: true,
      changed: true,
    },
    0,
  );
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A follower context whose download URL call always fails with `error`. */
function failingContext(error: Error, now: number) {
  const logs = captureLogger();
  const config = returnsSchema.parse({});
  const client = {
    downloadUrl: async () => {
      throw error;
    },
    downloadFile: async () => ({ md5: '', size: 0 }),
  };
  // The service's pacing is not under test: every call may go at once.
  const gate = { take: async <T>(options: T) => options };
  const ctx = {
    poll: { client, store, gate, config, log: logs.log, now: () => now, webhooksActive: () => false },
    proofs: {
      client,
      store,
      target: {},
      gate,
      tempDir: path.join(dir, 'tmp'),
      log: logs.log,
      now: () => now,
    },
    options: async () => ({}),
    aborted: () => false,
  } as unknown as TaskContext;
  return { ctx, logs };
}

const theDocument = async () => (await store.dueDocuments(Number.MAX_SAFE_INTEGER, 10))[0];

describe('document downloads follow the shared retry policy', () => {
  it('parks a download that fails with an internal error three times in a row, and logs one error saying what to run', async () => {
    const { ctx, logs } = failingContext(
      new ApiError('DOCEX_RESPONSE_INVALID', 'an answer of an unexpected shape', {
        method: 'GET',
        route: '/x',
      }),
      1_000,
    );
    for (let tries = 1; tries <= INTERNAL_TRY_LIMIT; tries++) {
      const doc = await theDocument();
      expect(doc, `try ${tries}`).toBeDefined();
      await documentTask(ctx, doc!).run();
    }
    expect(await theDocument()).toBeUndefined();
    expect((await store.counts()).documentsParked).toBe(1);
    const parked = logs.lines().filter((l) => l['level'] === 'error');
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({ code: 'DOCEX_RESPONSE_INVALID', jobId: 'job_1', file: 'a.pdf' });
    expect(String(parked[0]?.['msg'])).toContain('docex-agent returns retry');
    // returns retry takes it again, with a fresh count.
    expect(await store.retryFailedDocumentsNow(2_000)).toBe(1);
    expect(await theDocument()).toMatchObject({ state: 'pending', failures: 0 });
  });

  it('keeps a download failing on the network pending, waiting the return path intervals (15 s, then doubling)', async () => {
    const { ctx } = failingContext(
      new ApiError('DOCEX_NETWORK', 'no answer', { method: 'GET', route: '/x' }),
      1_000,
    );
    for (let tries = 1; tries <= INTERNAL_TRY_LIMIT + 2; tries++)
      await documentTask(ctx, (await theDocument())!).run();
    const doc = await theDocument();
    expect(doc).toMatchObject({ state: 'pending', failures: INTERNAL_TRY_LIMIT + 2 });
    expect(doc!.nextTryAt).toBe(1_000 + 15_000 * 2 ** (INTERNAL_TRY_LIMIT + 1));
    expect((await store.counts()).documentsParked).toBe(0);
  });
});
