/**
 * After `docex-agent resend`: the job of the re-sent event is usually `done` in returns.sqlite, so
 * without webhooks the new event would never be polled. This opens it again, due now, with a fresh
 * follow window (the running agent's follower sees it at its next sweep; SQLite in WAL mode lets
 * this process write beside it). A store that does not exist (jobs not followed)
 * is not created.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { RETURNS_FILE, ReturnsStore } from './store.js';

export type FollowAgain = 'marked' | 'not-followed' | 'no-store';

export function followJobAgain(stateDir: string, jobId: string, now: number): FollowAgain {
  const file = path.join(stateDir, RETURNS_FILE);
  if (!existsSync(file)) return 'no-store';
  const store = ReturnsStore.open(file, now);
  try {
    // The next poll lists the job's events and follows the new one.
    return store.reopenJob(jobId, now) ? 'marked' : 'not-followed';
  } finally {
    store.close();
  }
}
