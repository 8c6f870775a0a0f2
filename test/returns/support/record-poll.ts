import type { NewDocument, PolledEvent, PollRecord, ReturnsStore } from '../../../src/returns/store.js';

/** A poll as the poller records it: its events and documents (one page), then the job's row. */
export async function recordPolled(
  store: ReturnsStore,
  poll: PollRecord & { events?: PolledEvent[]; documents?: NewDocument[] },
  now: number,
): Promise<void> {
  const { events = [], documents = [], ...job } = poll;
  await store.recordEvents(job.jobId, events, documents, now, false);
  await store.recordPoll(job, now);
}

/**
 * A completed job with one final sending event `se_1` and one proof (`ref-a`, DELIVERY_PROOF) due
 * now, of `size` bytes, to be written at `path`.
 */
export async function recordOneDueProof(
  store: ReturnsStore,
  proof: { size: number; path: string },
  now: number,
): Promise<void> {
  await recordPolled(
    store,
    {
      jobId: 'job_1',
      status: 'COMPLETED',
      jobJson: '{}',
      events: [{ id: 'se_1', businessStatus: 'SUCCESS', status: 'SUCCESS', json: '{}' }],
      documents: [
        {
          sendingEventId: 'se_1',
          fileReference: 'ref-a',
          jobId: 'job_1',
          type: 'DELIVERY_PROOF',
          name: 'proof.pdf',
          contentType: 'application/pdf',
          size: proof.size,
          path: proof.path,
          nextTryAt: now,
        },
      ],
      nextPollAt: now,
      unchangedPolls: 0,
      done: false,
      changed: true,
    },
    now,
  );
}
