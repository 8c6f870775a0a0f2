/**
 * Pieces for follower tests that script the service's answers (the answers are the point, not
 * the transport): a real returns store (returns.sqlite) holding one followed job, a parsed returns config and a
 * client whose event and job answers the test decides.
 */
import path from 'node:path';
import { returnsSchema } from '../../../src/config/returns-schema.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { Job, SendingEvent, SendingEventDocument } from '../../../src/domain/wire.js';
import type { OutputTarget } from '../../../src/outputs/types.js';
import { Follower, type FollowerOptions } from '../../../src/returns/follower.js';
import type { JournalFeed } from '../../../src/returns/journal-feed.js';
import type { FollowClient } from '../../../src/returns/poll-job.js';
import { statusFilePath } from '../../../src/returns/proof-names.js';
import { SqliteReturnsStore } from '../../../src/returns/sqlite-store.js';
import type { NewJob, ReturnsStore } from '../../../src/returns/store.js';

export const scriptedConfig = returnsSchema.parse({
  statuses: { target: { type: 'local', path: '/tmp/unused-statuses' } },
  proofs: { target: { type: 'local', path: '/tmp/unused-proofs' } },
});

/** The addJobs entry of `job_<n>` of `inv-<n>.pdf` (folder `pdf`, item n), recorded and due at `t0`. */
export function followedJob(n: number, t0: number): NewJob {
  return {
    jobId: `job_${n}`,
    source: {
      itemId: n,
      folder: 'pdf',
      fileName: `inv-${n}.pdf`,
      sha256: 'ab',
      claimedAt: t0,
      day: '2026-11-21',
    },
    statusPath: (collision) => statusFilePath('2026-11-21', `inv-${n}.pdf`, n, collision),
    itemId: n,
    rowIndex: undefined,
    label: undefined,
    jobName: undefined,
    recordedAt: t0,
    firstPollAt: t0,
  };
}

/** returns.sqlite in `dir` following `job_1` of `inv-1.pdf` (folder `pdf`), recorded and due at `t0`. */
export async function oneJobStore(dir: string, t0: number): Promise<ReturnsStore> {
  const store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), t0);
  await store.addJobs([followedJob(1, t0)], 'cursor', '1', t0);
  return store;
}

const noFeed = { after: async () => [] } as unknown as JournalFeed;
const nowhere: OutputTarget = {
  description: 'nowhere',
  write: async () => {},
  exists: async () => false,
  close: async () => {},
};

/** A follower of `store` with no feed, outputs that keep nothing and the scripted client and config. */
export function scriptedFollower(
  base: Pick<FollowerOptions, 'store' | 'stateDir' | 'clock'>,
  options: Partial<FollowerOptions>,
): Follower {
  return new Follower({
    feed: noFeed,
    client: scriptedClient(),
    config: scriptedConfig,
    statusTarget: nowhere,
    proofTarget: nowhere,
    log: silentLogger(),
    maxSleepMs: 2,
    ...base,
    ...options,
  });
}

export const proofDoc = (fileReference: string, size = 10): SendingEventDocument => ({
  fileReference,
  name: 'delivery-proof.pdf',
  type: 'DELIVERY_PROOF',
  contentType: 'application/pdf',
  size,
});

export interface Script {
  documents?: () => SendingEventDocument[];
  jobGet?: FollowClient['jobs']['get'];
  eventGet?: FollowClient['sendingEvents']['get'];
}

/** One final event `se_1` of `job_1` with the scripted documents; downloads are not scripted. */
export function scriptedClient(script: Script = {}): FollowClient {
  const event = () =>
    ({
      id: 'se_1',
      jobId: 'job_1',
      status: 'SUCCESS',
      businessStatus: 'SUCCESS',
      documents: script.documents?.() ?? [],
    }) as SendingEvent;
  return {
    jobs: {
      get: script.jobGet ?? (async () => ({ id: 'job_1', status: 'COMPLETED', sendingEventCount: 1 }) as Job),
    },
    sendingEvents: {
      list: async () => ({ items: [event()], totalItems: 1 }) as never,
      get: script.eventGet ?? (async () => event()),
      downloadUrl: async () => {
        throw new Error('downloads are not scripted');
      },
      downloadFile: async () => {
        throw new Error('downloads are not scripted');
      },
    },
  };
}
