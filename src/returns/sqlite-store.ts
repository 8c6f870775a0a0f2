/**
 * The return path's store in its own SQLite file, `<stateDir>/returns.sqlite` (WAL, mode 0600):
 * the default backend of the ReturnsStore contract (store.ts). Every statement runs synchronously
 * inside the method (better-sqlite3), so a transaction is never split across an await; the
 * methods answer resolved promises.
 */
import { cachePrepared, type Database } from '../core/sqlite.js';
import { NIGHTLY_STORE_CACHE_KIB, openDatabase } from '../core/sqlite-store.js';
import {
  type DocumentClaim,
  type EventWithDocuments,
  type FinalEventEntry,
  POLL_UNFINISHED_KEY,
  type ReturnsCounts,
  type ReturnsStore,
} from './store.js';
import {
  type DocumentRow,
  type EventRow,
  type JobRow,
  type NewDocument,
  type NewJob,
  type PolledEvent,
  type PollRecord,
  type Row,
  type SourceRow,
  toDocument,
  toEvent,
  toJob,
  toSource,
} from './store-rows.js';
import { migrateReturns } from './store-schema.js';

/** Its WHERE is the sources_stale index's own, word for word: SQLite uses a partial index only then. */
export const STALE_SOURCES = 'SELECT * FROM sources WHERE written_version < version ORDER BY item_id LIMIT ?';

/**
 * The days with final events, found day by day through the events_day index (one seek per day: a
 * year of events is a million index entries, which a DISTINCT over them would read at every start).
 */
export const CSV_DAYS_DUE = `WITH RECURSIVE days (day) AS (
    SELECT min(final_day) FROM events
    UNION ALL
    SELECT (SELECT min(final_day) FROM events WHERE final_day > days.day) FROM days WHERE days.day < @today
  )
  SELECT day FROM days WHERE day < @today AND day NOT IN (SELECT day FROM csv_days) ORDER BY day`;

export class SqliteReturnsStore implements ReturnsStore {
  private constructor(
    private readonly db: Database,
    readonly location: string,
  ) {}

  static open(file: string, now: number): SqliteReturnsStore {
    // NORMAL in WAL: a killed process loses nothing; only a power cut may drop the last polls,
    // which the next poll repeats (a proof is re-written under the same name at worst).
    const db = openDatabase(file, { synchronous: 'NORMAL', cacheKiB: NIGHTLY_STORE_CACHE_KIB });
    try {
      migrateReturns(db, now);
      return new SqliteReturnsStore(cachePrepared(db), file);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async getMeta(key: string): Promise<string | undefined> {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  private setMeta(key: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }

  /** Records jobs found in the journal and the feed's new cursor, in one transaction. */
  async addJobs(jobs: readonly NewJob[], cursorKey: string, cursor: string, now: number): Promise<number> {
    let added = 0;
    this.db.transaction(() => {
      const hasSource = this.db.prepare('SELECT 1 FROM sources WHERE item_id = ?');
      const pathTaken = this.db.prepare('SELECT 1 FROM sources WHERE status_path = ?');
      const insertSource = this.db.prepare(
        `INSERT INTO sources (item_id, folder, file_name, sha256, claimed_at, day, status_path)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      const insertJob = this.db.prepare(
        `INSERT OR IGNORE INTO jobs (job_id, source_id, item_id, row_index, label, job_name, recorded_at,
           next_poll_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      for (const job of jobs) {
        const s = job.source;
        if (!hasSource.get(s.itemId)) {
          const plain = job.statusPath(false);
          const statusPath = pathTaken.get(plain) ? job.statusPath(true) : plain;
          insertSource.run(s.itemId, s.folder, s.fileName, s.sha256, s.claimedAt, s.day, statusPath);
        }
        const result = insertJob.run(
          job.jobId,
          s.itemId,
          job.itemId,
          job.rowIndex ?? null,
          job.label ?? null,
          job.jobName ?? null,
          job.recordedAt,
          job.firstPollAt,
          now,
        );
        if (result.changes > 0) {
          added++;
          this.bumpSource(s.itemId);
        }
      }
      this.setMeta(cursorKey, cursor);
    })();
    return added;
  }

  private bumpSource(itemId: number): void {
    this.db.prepare('UPDATE sources SET version = version + 1 WHERE item_id = ?').run(itemId);
  }

  async job(jobId: string): Promise<JobRow | undefined> {
    return this.jobRow(jobId);
  }

  private jobRow(jobId: string): JobRow | undefined {
    const r = this.db.prepare('SELECT * FROM jobs WHERE job_id = ?').get(jobId) as Row | undefined;
    return r && toJob(r);
  }

  /** Jobs not done whose poll time has come, oldest due first. */
  async dueJobs(now: number, limit: number): Promise<JobRow[]> {
    return (
      this.db
        .prepare('SELECT * FROM jobs WHERE done = 0 AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?')
        .all(now, limit) as Row[]
    ).map(toJob);
  }

  async openJobs(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM jobs WHERE done = 0').get() as { n: number }).n;
  }

  /**
   * Polls the job at `at` (a webhook said something changed). A job already done stays done until
   * that poll finds something open again (a resend, a late document).
   */
  async pollSoon(jobId: string, at: number): Promise<boolean> {
    return (
      this.db.prepare('UPDATE jobs SET next_poll_at = min(next_poll_at, ?) WHERE job_id = ?').run(at, jobId)
        .changes > 0
    );
  }

  /**
   * After a re-send: the job is followed again, due now, and its follow window (maxFollowMs) starts
   * again, so an old job's new event is not given up at its first poll.
   */
  async reopenJob(jobId: string, now: number): Promise<boolean> {
    return (
      this.db
        .prepare(
          'UPDATE jobs SET done = 0, gave_up = NULL, unchanged_polls = 0, next_poll_at = ?, recorded_at = ?, updated_at = ? WHERE job_id = ?',
        )
        .run(now, now, now, jobId).changes > 0
    );
  }

  /** A poll failed: try again at `at` (the job's backoff grows as if nothing changed). */
  async deferJob(jobId: string, at: number): Promise<void> {
    this.db
      .prepare('UPDATE jobs SET next_poll_at = ?, unchanged_polls = unchanged_polls + 1 WHERE job_id = ?')
      .run(at, jobId);
  }

  async pollUnfinishedWithin(now: number, spreadMs: number): Promise<number> {
    let moved = 0;
    this.db.transaction(() => {
      // Integer arithmetic: the i-th of n jobs (0-based, in due order) at now + i * spread / n.
      moved = this.db
        .prepare(
          `UPDATE jobs SET next_poll_at = r.at
             FROM (SELECT job_id,
                     ? + (row_number() OVER (ORDER BY next_poll_at, job_id) - 1) * ? / count(*) OVER () AS at
                   FROM jobs WHERE done = 0) AS r
           WHERE jobs.job_id = r.job_id AND r.at < jobs.next_poll_at`,
        )
        .run(now, Math.max(0, Math.floor(spreadMs))).changes;
      this.db.prepare('DELETE FROM meta WHERE key = ?').run(POLL_UNFINISHED_KEY);
    })();
    return moved;
  }

  async requestPollOfUnfinished(at: number): Promise<void> {
    this.setMeta(POLL_UNFINISHED_KEY, String(at));
  }

  async source(itemId: number): Promise<SourceRow | undefined> {
    return this.sourceRow(itemId);
  }

  private sourceRow(itemId: number): SourceRow | undefined {
    const r = this.db.prepare('SELECT * FROM sources WHERE item_id = ?').get(itemId) as Row | undefined;
    return r && toSource(r);
  }

  async jobsOfSource(itemId: number): Promise<JobRow[]> {
    return (
      this.db
        .prepare('SELECT * FROM jobs WHERE source_id = ? ORDER BY row_index, job_id')
        .all(itemId) as Row[]
    ).map(toJob);
  }

  /** The events of a job after `afterId` (ids in order), `limit` at most: one page of a status file. */
  async eventsOfJobPage(jobId: string, afterId: string, limit: number): Promise<EventRow[]> {
    return this.eventPage(jobId, afterId, limit);
  }

  async eventsWithDocumentsPage(
    jobId: string,
    afterId: string,
    limit: number,
  ): Promise<EventWithDocuments[]> {
    return this.eventPage(jobId, afterId, limit).map((event) => ({
      event,
      documents: this.documentRows(event.id),
    }));
  }

  private eventPage(jobId: string, afterId: string, limit: number): EventRow[] {
    return (
      this.db
        .prepare('SELECT * FROM events WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?')
        .all(jobId, afterId, limit) as Row[]
    ).map(toEvent);
  }

  /** Whether every document of every event of the file's jobs is written. */
  async allDocumentsDone(itemId: number): Promise<boolean> {
    const row = this.db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM documents d JOIN events e ON e.id = d.sending_event_id
           JOIN jobs j ON j.job_id = e.job_id WHERE j.source_id = ? AND d.state != 'done') AS pending`,
      )
      .get(itemId) as { pending: number };
    return row.pending === 0;
  }

  async event(id: string): Promise<EventRow | undefined> {
    return this.eventRow(id);
  }

  private eventRow(id: string): EventRow | undefined {
    const r = this.db.prepare('SELECT * FROM events WHERE id = ?').get(id) as Row | undefined;
    return r && toEvent(r);
  }

  async eventsById(ids: readonly string[]): Promise<Map<string, EventRow>> {
    const found = new Map<string, EventRow>();
    for (const id of ids) {
      const event = this.eventRow(id);
      if (event) found.set(id, event);
    }
    return found;
  }

  async documentsOfEvent(sendingEventId: string): Promise<DocumentRow[]> {
    return this.documentRows(sendingEventId);
  }

  private documentRows(sendingEventId: string): DocumentRow[] {
    return (
      this.db
        .prepare('SELECT * FROM documents WHERE sending_event_id = ? ORDER BY type, file_reference')
        .all(sendingEventId) as Row[]
    ).map(toDocument);
  }

  /** Records the job's row after a poll (its pages were recorded by recordEvents before). */
  async recordPoll(poll: PollRecord, now: number): Promise<void> {
    this.db.transaction(() => {
      const job = this.jobRow(poll.jobId);
      if (!job) return;
      this.db
        .prepare(
          `UPDATE jobs SET status = ?, job_json = ?, next_poll_at = ?, unchanged_polls = ?, polls = polls + 1,
             done = ?, gave_up = ?, updated_at = ? WHERE job_id = ?`,
        )
        .run(
          poll.status,
          poll.jobJson,
          poll.nextPollAt,
          poll.unchangedPolls,
          poll.done ? 1 : 0,
          poll.gaveUp ?? null,
          now,
          poll.jobId,
        );
      if (poll.changed || poll.done !== job.done || (poll.gaveUp ?? undefined) !== job.gaveUp) {
        this.bumpSource(job.sourceId);
      }
    })();
  }

  /**
   * One page of a poll's events and their new documents, in a transaction of its own; `changed`
   * moves the file's status version with it. The job's row is recorded by recordPoll after the last page.
   */
  async recordEvents(
    jobId: string,
    events: readonly PolledEvent[],
    documents: readonly NewDocument[],
    now: number,
    changed: boolean,
  ): Promise<void> {
    this.db.transaction(() => {
      const job = this.jobRow(jobId);
      if (!job) return;
      this.writeEvents(jobId, events, documents, now);
      if (changed) this.bumpSource(job.sourceId);
    })();
  }

  private writeEvents(
    jobId: string,
    events: readonly PolledEvent[],
    documents: readonly NewDocument[],
    now: number,
  ): void {
    const upsert = this.db.prepare(
      `INSERT INTO events (id, job_id, business_status, status, final_at, final_day, event_json, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET business_status = excluded.business_status, status = excluded.status,
         final_at = coalesce(events.final_at, excluded.final_at),
         final_day = coalesce(events.final_day, excluded.final_day),
         event_json = excluded.event_json, updated_at = excluded.updated_at`,
    );
    for (const e of events) {
      upsert.run(e.id, jobId, e.businessStatus, e.status, e.finalAt ?? null, e.finalDay ?? null, e.json, now);
    }
    const insertDoc = this.db.prepare(
      `INSERT OR IGNORE INTO documents (sending_event_id, file_reference, job_id, type, name, content_type, size,
         path, state, next_try_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
    );
    for (const d of documents) {
      insertDoc.run(
        d.sendingEventId,
        d.fileReference,
        d.jobId,
        d.type,
        d.name ?? null,
        d.contentType ?? null,
        d.size ?? null,
        d.path,
        d.nextTryAt,
      );
    }
  }

  /** Documents to fetch now: pending ones whose time has come, and any left `writing` by a crash. */
  async dueDocuments(now: number, limit: number): Promise<DocumentRow[]> {
    return (
      this.db
        .prepare(
          `SELECT * FROM documents WHERE state IN ('pending', 'writing') AND next_try_at <= ? ORDER BY next_try_at LIMIT ?`,
        )
        .all(now, limit) as Row[]
    ).map(toDocument);
  }

  /** Whether a path is already the name of another document (a template that collides). */
  async pathUsedByOther(path: string, sendingEventId: string, fileReference: string): Promise<boolean> {
    return this.pathTaken(path, sendingEventId, fileReference);
  }

  async pathsUsedByOthers(
    named: readonly { path: string; sendingEventId: string; fileReference: string }[],
  ): Promise<boolean[]> {
    return named.map((n) => this.pathTaken(n.path, n.sendingEventId, n.fileReference));
  }

  private pathTaken(path: string, sendingEventId: string, fileReference: string): boolean {
    return (
      this.db
        .prepare(
          'SELECT 1 FROM documents WHERE path = ? AND NOT (sending_event_id = ? AND file_reference = ?)',
        )
        .get(path, sendingEventId, fileReference) !== undefined
    );
  }

  /** Recorded before the download (ReturnsStore.markDocumentWriting). */
  async markDocumentWriting(d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>): Promise<boolean> {
    const changed = this.db
      .prepare(
        `UPDATE documents SET state = 'writing' WHERE sending_event_id = ? AND file_reference = ? AND state IN ('pending', 'writing')`,
      )
      .run(d.sendingEventId, d.fileReference).changes;
    return changed > 0;
  }

  /** ReturnsStore.claimDocument by the writer's clock: the agents of one SQLite store share a host. */
  async claimDocument(
    d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>,
    claim: DocumentClaim,
  ): Promise<number | undefined> {
    const until = claim.now + claim.ms;
    const changed = this.db
      .prepare(
        `UPDATE documents SET state = 'writing', next_try_at = ? WHERE sending_event_id = ? AND file_reference = ?
         AND state IN ('pending', 'writing') AND (next_try_at <= ? OR next_try_at = ?)`,
      )
      .run(until, d.sendingEventId, d.fileReference, claim.now, claim.held ?? null).changes;
    return changed > 0 ? until : undefined;
  }

  async markDocumentDone(d: DocumentRow, md5: string | undefined, now: number): Promise<void> {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE documents SET state = 'done', md5 = ?, done_at = ?, last_error = NULL
           WHERE sending_event_id = ? AND file_reference = ?`,
        )
        .run(md5 ?? null, now, d.sendingEventId, d.fileReference);
      const job = this.jobRow(d.jobId);
      if (job) this.bumpSource(job.sourceId);
    })();
  }

  async markDocumentFailed(d: DocumentRow, error: string, nextTryAt: number): Promise<void> {
    this.db
      .prepare(
        `UPDATE documents SET state = 'pending', failures = failures + 1, last_error = ?, next_try_at = ?
         WHERE sending_event_id = ? AND file_reference = ? AND state <> 'done'`,
      )
      .run(error, nextTryAt, d.sendingEventId, d.fileReference);
  }

  /** Failed past the retry policy's limit: left alone until `returns retry`. */
  async markDocumentParked(d: DocumentRow, error: string): Promise<void> {
    this.db
      .prepare(
        `UPDATE documents SET state = 'parked', failures = failures + 1, last_error = ?
         WHERE sending_event_id = ? AND file_reference = ? AND state <> 'done'`,
      )
      .run(error, d.sendingEventId, d.fileReference);
  }

  /**
   * Documents whose download failed, waiting for their backoff or parked, due now with a fresh
   * count of tries (`docex-agent returns retry`): a running agent's follower takes them at its next
   * pass. Answers how many.
   */
  async retryFailedDocumentsNow(now: number): Promise<number> {
    return this.db
      .prepare(
        `UPDATE documents SET state = 'pending', failures = 0, next_try_at = ?
         WHERE state = 'parked' OR (state = 'pending' AND failures > 0 AND next_try_at > ?)`,
      )
      .run(now, now).changes;
  }

  /** Sources whose status file is older than their state. */
  async staleSources(limit: number): Promise<SourceRow[]> {
    return (this.db.prepare(STALE_SOURCES).all(limit) as Row[]).map(toSource);
  }

  /** One agent per state folder: nobody else writes its status files. */
  async writeStatusAlone(
    itemId: number,
    write: (source: SourceRow, jobs: JobRow[]) => Promise<boolean>,
  ): Promise<boolean> {
    const source = await this.source(itemId);
    if (!source || !(await write(source, await this.jobsOfSource(itemId)))) return false;
    this.markStatusWritten(itemId, source.version);
    return true;
  }

  private markStatusWritten(itemId: number, version: number): void {
    this.db
      .prepare('UPDATE sources SET written_version = max(written_version, ?) WHERE item_id = ?')
      .run(version, itemId);
  }

  async eventsFinalOnPage(
    day: string,
    after: { finalAt: number; id: string } | undefined,
    limit: number,
  ): Promise<FinalEventEntry[]> {
    const rows = this.db
      .prepare(
        `SELECT * FROM events WHERE final_day = ? AND (final_at > ? OR (final_at = ? AND id > ?))
         ORDER BY final_at, id LIMIT ?`,
      )
      .all(day, after?.finalAt ?? -1, after?.finalAt ?? -1, after?.id ?? '', limit) as Row[];
    return rows.map((r) => {
      const event = toEvent(r);
      const job = this.jobRow(event.jobId)!;
      return { event, job, source: this.sourceRow(job.sourceId)!, documents: this.documentRows(event.id) };
    });
  }

  /** How many events became final on `day`. */
  async countFinalOn(day: string): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM events WHERE final_day = ?').get(day) as { n: number })
      .n;
  }

  /** Days before `today` with final events and no CSV written yet. */
  async csvDaysDue(today: string): Promise<string[]> {
    return (this.db.prepare(CSV_DAYS_DUE).all({ today }) as { day: string }[]).map((r) => r.day);
  }

  async recordCsv(day: string, rows: number, now: number): Promise<void> {
    this.db
      .prepare(
        'INSERT INTO csv_days (day, rows, written_at) VALUES (?, ?, ?) ON CONFLICT (day) DO UPDATE SET rows = excluded.rows, written_at = excluded.written_at',
      )
      .run(day, rows, now);
  }

  async counts(): Promise<ReturnsCounts> {
    const one = (sql: string) => (this.db.prepare(sql).get() as { n: number }).n;
    return {
      jobs: one('SELECT count(*) AS n FROM jobs'),
      open: one('SELECT count(*) AS n FROM jobs WHERE done = 0'),
      events: one('SELECT count(*) AS n FROM events'),
      documents: one('SELECT count(*) AS n FROM documents'),
      documentsDone: one(`SELECT count(*) AS n FROM documents WHERE state = 'done'`),
      documentsParked: one(`SELECT count(*) AS n FROM documents WHERE state = 'parked'`),
    };
  }
}
