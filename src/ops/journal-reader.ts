/**
 * What the health and metrics endpoints read from the journal, through its read API on a connection
 * of their own (read-only, same process): totals of files taken, submitted and rejected and of jobs created,
 * and the upload windows still open. Never the upload URL column. The totals are summed from the
 * history, which only grows: each scrape counts only the entries added since the last one, in the
 * journal (GROUP BY, a range of ids at a time with a pause for the event loop between them), so a
 * journal of millions of entries costs one longer first scrape and no object per entry.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  type JournalLocation,
  openJournalReader,
  type PendingUpload,
  type JournalReader as ReadApi,
  type WaitingFiles,
} from '../journal/index.js';

/** Totals since the journal was created, by folder. */
export interface JournalCounts {
  taken: Record<string, number>;
  /** Files the service has: uploaded, or (payload files) all their payload jobs finished. */
  submitted: Record<string, number>;
  /** By folder, then by DOCEX_ code. */
  rejected: Record<string, Record<string, number>>;
  /** Every job created (a job made again after its upload window counts again). */
  jobsCreated: Record<string, number>;
}

/** History ids counted per statement (in the journal), with a turn of the event loop between. */
const SPAN = 10_000;

export class JournalReader {
  private opening: Promise<ReadApi> | undefined;
  private cursor = 0;
  private totals: JournalCounts = { taken: {}, submitted: {}, rejected: {}, jobsCreated: {} };
  private reading: Promise<JournalCounts> | undefined;

  constructor(private readonly location: JournalLocation) {}

  /** Opened at the first read: a database down at start only fails the reads until it answers. */
  private journal(): Promise<ReadApi> {
    this.opening ??= openJournalReader(this.location, { busyTimeoutMs: 2000 }).catch((err: unknown) => {
      this.opening = undefined;
      throw err;
    });
    return this.opening;
  }

  /** The totals, brought up to date with the history entries added since the last call. */
  counts(): Promise<JournalCounts> {
    this.reading ??= this.catchUp().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async catchUp(): Promise<JournalCounts> {
    const t = this.totals;
    const journal = await this.journal();
    for (;;) {
      const { upTo, tallies } = await journal.historyTally(this.cursor, SPAN);
      for (const { folder, from, to, kind, rejectCode, entries } of tallies) {
        const add = (map: Record<string, number>, key: string) => {
          map[key] = (map[key] ?? 0) + entries;
        };
        if (to === 'created') add(t.jobsCreated, folder);
        if (kind !== 'file') continue;
        if (from === undefined) add(t.taken, folder);
        if (to === 'uploaded' || (to === 'done' && from === 'validated')) add(t.submitted, folder);
        if (to === 'rejected') {
          const byCode = t.rejected[folder] ?? {};
          t.rejected[folder] = byCode;
          add(byCode, rejectCode ?? 'unknown');
        }
      }
      const more = upTo >= this.cursor + SPAN;
      this.cursor = upTo;
      if (!more) break;
      await yieldToLoop();
    }
    return structuredClone(t);
  }

  /** Jobs created whose upload is not confirmed yet, soonest deadline first. */
  async pendingUploads(): Promise<PendingUpload[]> {
    return (await this.journal()).pendingUploads();
  }

  /** Files not finished yet, by folder and state. */
  async waiting(): Promise<WaitingFiles[]> {
    return (await this.journal()).waiting();
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    await opening?.then((journal) => journal.close()).catch(() => undefined);
  }
}
