/**
 * Pieces for follower tests that script the service's answers (the answers are the point, not
 * the transport): a real returns store (returns.sqlite) holding one followed job, a parsed returns config and a
 * client whose event and job answers the test decides.
 */
import path from 'node:path';
import { returnsSchema } from '../../../src/config/returns-schema.js';
import type { Job, SendingEvent, SendingEventDocument } from '../../../src/domain/wire.js';
import type { FollowClient } from '../../../src/returns/poll-job.js';
import { statusFilePath } from '../../../src/returns/proof-names.js';
import { SqliteReturnsStore } from '../../../src/returns/sqlite-store.js';
import type { ReturnsStore } from '../../../src/returns/store.js';

export const scriptedConfig = returnsSchema.parse({
  statuses: { target: { type: 'local', path: '/tmp/unused-statuses' } },
  proofs: { target: { type: 'local', path: '/tmp/unused-proofs' } },
});

/** returns.sqlite in `dir` following `job_1` of `inv-1.pdf` (folder `pdf`), recorded and due at `t0`. */
export async function oneJobStore(dir: string, t0: number): Promise<ReturnsStore> {
  const store = SqliteReturnsStore.open(path.join(dir, 'returns.sqlite'), t0);
  await store.addJobs(
    [
      {
        jobId: 'job_1',
        source: {
          itemId: 1,
          folder: 'pdf',
          fileName: 'inv-1.pdf',
          sha256: 'ab',
          claimedAt: t0,
          day: '2026-11-21',
        },
        statusPath: (collision) => statusFilePath('2026-11-21', 'inv-1.pdf', 1, collision),
        itemId: 1,
        rowIndex: undefined,
        label: undefined,
        jobName: undefined,
        recordedAt: t0,
        firstPollAt: t0,
      },
    ],
    'cursor',
    '1',
    t0,
  );
  return store;
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
