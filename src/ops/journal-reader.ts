/**
 * What the health and metrics endpoints read from the journal, through its read API on a connection
 * of their own (read-only, same process): totals of files taken, submitted and rejected and of jobs created,
 * and the upload windows still open. Never the upload URL column. The totals are summed from the
 * history, which only grows: each scrape reads only the entries added since the last one, in
 * chunks with a pause for the event loop between them, so a journal of millions of entries costs
 * one slow first scrape (spread out) and cheap ones after.
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

const CHUNK = 5_000;

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
    const add = (map: Record<string, number>, key: string) => {
      map[key] = (map[key] ?? 0) + 1;
    };
    const journal = await this.journal();
    for (;;) {
      const steps = await journal.historyAfter(this.cursor, CHUNK);
      for (const { folder, from, to, kind, rejectCode } of steps) {
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
      if (steps.length > 0) this.cursor = steps[steps.length - 1]!.id;
      if (steps.length < CHUNK) break;
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
