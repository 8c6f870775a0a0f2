/**
 * Which jobs to follow: the intake journal's items that reached `done` with a job, in the order
 * their `done` was recorded, read through the journal's read API on a connection of the return
 * path's own. The journal stays the intake's alone.
 */
import {
  type DoneJobItem,
  type JournalLocation,
  type JournalReader,
  openJournalReader,
} from '../journal/index.js';

export class JournalFeed {
  private constructor(private readonly journal: JournalReader) {}

  static async open(location: JournalLocation): Promise<JournalFeed> {
    return new JournalFeed(await openJournalReader(location, { busyTimeoutMs: 5000 }));
  }

  /** Up to `limit` done job items recorded after `cursor`. */
  after(cursor: number, limit = 500): Promise<DoneJobItem[]> {
    return this.journal.doneJobsAfter(cursor, limit);
  }

  /**
   * The managed company recorded on a file item at its claim (its route's, '' for none);
   * undefined for an item recorded before the journal kept it, or gone (pruned).
   */
  async itemCompany(itemId: number): Promise<string | undefined> {
    return (await this.journal.get(itemId))?.managedCompanyId;
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}
