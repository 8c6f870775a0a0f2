/**
 * Which jobs to follow: the intake journal's items that reached `done` with a job, in the order
 * their `done` was recorded, read through the journal's read API on a read-only connection of the
 * return path's own. The journal stays the intake's alone.
 */
import { type DoneJobItem, ReadOnlyJournal } from '../journal/index.js';

export class JournalFeed {
  private readonly journal: ReadOnlyJournal;

  constructor(journalFile: string) {
    this.journal = ReadOnlyJournal.open(journalFile, { busyTimeoutMs: 5000 });
  }

  /** Up to `limit` done job items recorded after `cursor`. */
  after(cursor: number, limit = 500): DoneJobItem[] {
    return this.journal.doneJobsAfter(cursor, limit);
  }

  close(): void {
    this.journal.close();
  }
}
