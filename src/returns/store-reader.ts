/**
 * What others read of the return path's own store (`<stateDir>/returns.sqlite`), read-only and on a
 * connection of their own: the proofs written (metrics) and what is known of one job (the status
 * command). Opened at the first read, so an agent whose return path is off (no file) costs nothing;
 * a missing or unreadable store reads as nothing. The statements are prepared once, at the open.
 */
import { existsSync } from 'node:fs';
import { Database } from '../core/sqlite.js';
import {
  type DocumentRow,
  type EventRow,
  type JobRow,
  type Row,
  toDocument,
  toEvent,
  toJob,
} from './store-rows.js';

/** A job as the return path follows it: undefined `job` when it is not polled yet. */
export interface FollowedJob {
  job: JobRow | undefined;
  events: EventRow[];
  documents: DocumentRow[];
}

function prepareReads(db: Database) {
  return {
    proofsArchived: db.prepare(`SELECT count(*) AS n FROM documents WHERE state = 'done'`),
    job: db.prepare('SELECT * FROM jobs WHERE job_id = ?'),
    events: db.prepare('SELECT * FROM events WHERE job_id = ? ORDER BY id'),
    documents: db.prepare('SELECT * FROM documents WHERE job_id = ? ORDER BY sending_event_id, type'),
  };
}

export class ReturnsReader {
  private db: Database | undefined;
  private reads: ReturnType<typeof prepareReads> | undefined;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs = 2000,
  ) {}

  /** Proof documents written (state done); undefined while the store does not exist. */
  proofsArchived(): number | undefined {
    try {
      return (this.open()?.proofsArchived.get() as { n: number } | undefined)?.n;
    } catch {
      this.close();
      return undefined;
    }
  }

  /**
   * The job, its sending events and their documents; undefined while the store does not exist.
   * Throws when the store cannot be read.
   */
  followedJob(jobId: string): FollowedJob | undefined {
    const reads = this.open();
    if (!reads) return undefined;
    const job = reads.job.get(jobId) as Row | undefined;
    return {
      job: job ? toJob(job) : undefined,
      events: (reads.events.all(jobId) as Row[]).map(toEvent),
      documents: (reads.documents.all(jobId) as Row[]).map(toDocument),
    };
  }

  close(): void {
    if (this.db?.open) this.db.close();
    this.db = undefined;
    this.reads = undefined;
  }

  private open(): ReturnType<typeof prepareReads> | undefined {
    if (this.reads) return this.reads;
    if (!existsSync(this.file)) return undefined;
    try {
      this.db = new Database(this.file, { readonly: true, fileMustExist: true });
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      this.reads = prepareReads(this.db);
      return this.reads;
    } catch (err) {
      this.close();
      throw err;
    }
  }
}
