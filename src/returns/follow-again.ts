/**
 * After `docex-agent resend`: the job of the re-sent event is usually `done` in the returns store,
 * so without webhooks the new event would never be polled. This opens it again, due now, with a
 * fresh follow window (the running agent's follower sees it at its next sweep; SQLite in WAL mode
 * lets this process write beside it, PostgreSQL is shared anyway). A store that does not exist
 * (jobs not followed) is not created.
 */
import type { JournalLocation } from '../journal/index.js';
import { openExistingReturnsStore } from './open-stores.js';

export type FollowAgain = 'marked' | 'not-followed' | 'no-store';

export async function followJobAgain(
  location: JournalLocation,
  stateDir: string,
  jobId: string,
  now: number,
): Promise<FollowAgain> {
  const store = await openExistingReturnsStore(location, stateDir, { now: () => now });
  if (!store) return 'no-store';
  try {
    // The next poll lists the job's events and follows the new one.
    return (await store.reopenJob(jobId, now)) ? 'marked' : 'not-followed';
  } finally {
    await store.close();
  }
}
