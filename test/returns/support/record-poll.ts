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
