/**
 * The ReturnsReader (store-reader.ts) of `<stateDir>/returns.sqlite`: read-only, on a connection of
 * its own. Opened at the first read, so an agent whose return path is off (no file) costs nothing;
 * a missing store reads as nothing. The statements are prepared once, at the open.
 */
import { existsSync } from 'node:fs';
import { Database } from '../core/sqlite.js';
import type { FollowedJob, ReturnsReader } from './store-reader.js';
import { type Row, toDocument, toEvent, toJob } from './store-rows.js';

function prepareReads(db: Database) {
  return {
    proofsArchived: db.prepare(`SELECT count(*) AS n FROM documents WHERE state = 'done'`),
    job: db.prepare('SELECT * FROM jobs WHERE job_id = ?'),
    events: db.prepare('SELECT * FROM events WHERE job_id = ? ORDER BY id'),
    documents: db.prepare(
      'SELECT * FROM documents WHERE job_id = ? ORDER BY sending_event_id, type, file_reference',
    ),
  };
}

export class SqliteReturnsReader implements ReturnsReader {
  private db: Database | undefined;
  private reads: ReturnType<typeof prepareReads> | undefined;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs = 2000,
  ) {}

  async proofsArchived(): Promise<number | undefined> {
    try {
      return (this.open()?.proofsArchived.get() as { n: number } | undefined)?.n;
    } catch {
      this.closeNow();
      return undefined;
    }
  }

  async followedJob(jobId: string): Promise<FollowedJob | undefined> {
    const reads = this.open();
    if (!reads) return undefined;
    const job = reads.job.get(jobId) as Row | undefined;
    return {
      job: job ? toJob(job) : undefined,
      events: (reads.events.all(jobId) as Row[]).map(toEvent),
      documents: (reads.documents.all(jobId) as Row[]).map(toDocument),
    };
  }

  async close(): Promise<void> {
    this.closeNow();
  }

  private closeNow(): void {
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
      this.closeNow();
      throw err;
    }
  }
}
