/**
 * The ReturnsStore (../store.ts) in the journal's PostgreSQL database: the tables of schema.ts
 * (returns_*), on a pool of its own built as the journal's (journal/postgres/pool.ts). Each method
 * that writes more than one row runs in one transaction on one pooled client, or is one statement;
 * a poll's page of events and documents is written with one statement each (unnest), not one per
 * row. Reads that need several tables take one statement per table, never one per row.
 */
import { DocexError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { PostgresConnection } from '../../journal/location.js';
import {
  type BeginStatement,
  type CommitStatement,
  PgSession,
  type Statement,
  type Tx,
} from '../../journal/postgres/pool.js';
import { LOCK_SPACE } from '../../journal/postgres/schema.js';
import {
  type DocumentClaim,
  type EventWithDocuments,
  type FinalEventEntry,
  POLL_UNFINISHED_KEY,
  type ReturnsCounts,
  type ReturnsStore,
} from '../store.js';
import {
  type DocumentRow,
  type EventRow,
  type JobRow,
  type NewDocument,
  type NewJob,
  type PolledEvent,
  type PollRecord,
  type SourceRow,
  toDocument,
  toEvent,
  toJob,
  toSource,
} from '../store-rows.js';
import { asRows, byEvent, DOCUMENT_COLUMNS, EVENT_COLUMNS, JOB_COLUMNS, SOURCE_COLUMNS } from './rows.js';
import { existingVersion, migrateComponent, RETURNS_COMPONENT } from './schema.js';

/** The database's clock in epoch ms: a document claim's time (DocumentClaim). */
const NOW_MS = '(extract(epoch FROM now()) * 1000)::bigint';

/** A statement prepared once per pooled connection. */
const q = (name: string, text: string): Statement => ({ name: `returns-${name}`, text });

/** A source's jobs in the order its status file lists them. */
function jobsOfSourceText(sourceId: string | number): string {
  return `SELECT ${JOB_COLUMNS} FROM returns_jobs WHERE source_id = ${sourceId} ORDER BY row_index NULLS FIRST, job_id`;
}

/**
 * A CTE that makes its statement's own commit wait for the server's disk: the store's commits do
 * not (PostgresReturnsStore.open), but a webhook's effect must be durable before it is answered,
 * and what says a file was written for the ERP before it is written again.
 */
const SYNCED = "synced AS MATERIALIZED (SELECT set_config('synchronous_commit', 'on', true))";

const S = {
  getMeta: q('get-meta', 'SELECT value FROM returns_meta WHERE key = $1'),
  setMeta: q(
    'set-meta',
    'INSERT INTO returns_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
  ),
  // A job and, the first time, its source (numbered when its plain status path is taken): the
  // source row is visible to this statement only once it exists, so a new source starts at the
  // version its first job gives it. placed is false when the source is neither there nor inserted
  // (a concurrent insert of it or of its status path won): then nothing is written.
  addJob: q(
    'add-job',
    `WITH src AS (
       INSERT INTO returns_sources (item_id, folder, file_name, sha256, claimed_at, day, status_path, version)
       SELECT $1, $2, $3, $4, $5, $6,
         CASE WHEN EXISTS (SELECT 1 FROM returns_sources WHERE status_path = $7) THEN $8 ELSE $7 END, 2
       WHERE NOT EXISTS (SELECT 1 FROM returns_sources WHERE item_id = $1)
       ON CONFLICT DO NOTHING RETURNING 1
     ), placed AS (
       SELECT EXISTS (SELECT 1 FROM src) OR EXISTS (SELECT 1 FROM returns_sources WHERE item_id = $1) AS yes
     ), job AS (
       INSERT INTO returns_jobs (job_id, source_id, item_id, row_index, label, job_name, recorded_at,
         next_poll_at, updated_at)
       SELECT $9, $1, $10, $11, $12, $13, $14, $15, $16 FROM placed WHERE placed.yes
       ON CONFLICT (job_id) DO NOTHING RETURNING 1
     ), bump AS (
       UPDATE returns_sources SET version = version + 1 WHERE item_id = $1 AND EXISTS (SELECT 1 FROM job)
     ), cursor AS (
       INSERT INTO returns_meta (key, value) SELECT $18, $19 FROM placed WHERE $17 AND placed.yes
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
     )
     SELECT placed.yes AS placed, (SELECT count(*) FROM job)::int AS added FROM placed`,
  ),
  job: q('job', `SELECT ${JOB_COLUMNS} FROM returns_jobs WHERE job_id = $1`),
  jobs: q('jobs', `SELECT ${JOB_COLUMNS} FROM returns_jobs WHERE job_id = ANY($1::text[])`),
  dueJobs: q(
    'due-jobs',
    `SELECT ${JOB_COLUMNS} FROM returns_jobs WHERE NOT done AND next_poll_at <= $1 ORDER BY next_poll_at LIMIT $2`,
  ),
  openJobs: q('open-jobs', 'SELECT count(*) AS n FROM returns_jobs WHERE NOT done'),
  // Synced: a webhook is answered once its poll is on disk; a re-send's job is followed again.
  pollSoon: q(
    'poll-soon',
    `WITH ${SYNCED} UPDATE returns_jobs SET next_poll_at = LEAST(next_poll_at, $1)
     WHERE job_id = $2 AND EXISTS (SELECT 1 FROM synced) RETURNING 1 AS hit`,
  ),
  reopenJob: q(
    'reopen-job',
    `WITH ${SYNCED} UPDATE returns_jobs SET done = false, gave_up = NULL, unchanged_polls = 0, next_poll_at = $1,
       recorded_at = $1, updated_at = $1 WHERE job_id = $2 AND EXISTS (SELECT 1 FROM synced) RETURNING 1 AS hit`,
  ),
  requestPoll: q(
    'request-poll',
    `WITH ${SYNCED} INSERT INTO returns_meta (key, value) SELECT $1, $2 FROM synced
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
  ),
  deferJob: q(
    'defer-job',
    'UPDATE returns_jobs SET next_poll_at = $1, unchanged_polls = unchanged_polls + 1 WHERE job_id = $2',
  ),
  // The i-th of n jobs (0-based, in due order) at now + i * spread / n (bigint division).
  pollUnfinished: q(
    'poll-unfinished',
    `UPDATE returns_jobs j SET next_poll_at = r.at
       FROM (SELECT job_id,
               $1::bigint + (row_number() OVER (ORDER BY next_poll_at, job_id) - 1) * $2::bigint
                 / count(*) OVER () AS at
             FROM returns_jobs WHERE NOT done) AS r
     WHERE j.job_id = r.job_id AND r.at < j.next_poll_at
     RETURNING 1 AS moved`,
  ),
  deleteMeta: q('delete-meta', 'DELETE FROM returns_meta WHERE key = $1'),
  source: q('source', `SELECT ${SOURCE_COLUMNS} FROM returns_sources WHERE item_id = $1`),
  sources: q('sources', `SELECT ${SOURCE_COLUMNS} FROM returns_sources WHERE item_id = ANY($1::bigint[])`),
  jobsOfSource: q('jobs-of-source', jobsOfSourceText('$1')),
  eventPage: q(
    'event-page',
    `SELECT ${EVENT_COLUMNS} FROM returns_events WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
  ),
  allDocumentsDone: q(
    'all-documents-done',
    `SELECT (EXISTS (SELECT 1 FROM returns_documents d JOIN returns_events e ON e.id = d.sending_event_id
       JOIN returns_jobs j ON j.job_id = e.job_id WHERE j.source_id = $1 AND d.state <> 'done'))::int AS pending`,
  ),
  event: q('event', `SELECT ${EVENT_COLUMNS} FROM returns_events WHERE id = $1`),
  events: q('events', `SELECT ${EVENT_COLUMNS} FROM returns_events WHERE id = ANY($1::text[])`),
  documentsOfEvent: q(
    'documents-of-event',
    `SELECT ${DOCUMENT_COLUMNS} FROM returns_documents WHERE sending_event_id = $1 ORDER BY type, file_reference`,
  ),
  documentsOfEvents: q(
    'documents-of-events',
    `SELECT ${DOCUMENT_COLUMNS} FROM returns_documents WHERE sending_event_id = ANY($1::text[])
     ORDER BY sending_event_id, type, file_reference`,
  ),
  // One statement: the job's row locked and read as it was, updated, and its file's status version
  // moved when the poll changed what the file shows ($9: the events changed; done or gave_up moved).
  recordPoll: q(
    'record-poll',
    `WITH was AS (SELECT source_id, done, gave_up FROM returns_jobs WHERE job_id = $8 FOR UPDATE),
     polled AS (
       UPDATE returns_jobs SET status = $1, job_json = $2, next_poll_at = $3, unchanged_polls = $4,
         polls = polls + 1, done = $5, gave_up = $6, updated_at = $7
       WHERE job_id = $8 AND EXISTS (SELECT 1 FROM was)
     )
     UPDATE returns_sources SET version = version + 1
     WHERE item_id = (SELECT source_id FROM was)
       AND ($9 OR $5 IS DISTINCT FROM (SELECT done FROM was) OR $6::text IS DISTINCT FROM (SELECT gave_up FROM was))`,
  ),
  // One statement: a polled page's events upserted (the first final time kept) and its new
  // documents added (one already recorded is kept as it is) while the job is followed, and the file's
  // status version moved with a changed page ($18). An id twice in one page: the last event wins
  // (recordEvents keeps it alone), the first document, as one statement per row would have it.
  recordEvents: q(
    'record-events',
    `WITH job AS (SELECT source_id FROM returns_jobs WHERE job_id = $1),
     events AS (
       INSERT INTO returns_events (id, job_id, business_status, status, final_at, final_day, event_json, updated_at)
       SELECT e.id, $1, e.business_status, e.status, e.final_at, e.final_day, e.event_json, $8
         FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::text[])
           AS e (id, business_status, status, final_at, final_day, event_json)
         WHERE EXISTS (SELECT 1 FROM job)
       ON CONFLICT (id) DO UPDATE SET business_status = EXCLUDED.business_status, status = EXCLUDED.status,
         final_at = coalesce(returns_events.final_at, EXCLUDED.final_at),
         final_day = coalesce(returns_events.final_day, EXCLUDED.final_day),
         event_json = EXCLUDED.event_json, updated_at = EXCLUDED.updated_at
     ),
     documents AS (
       INSERT INTO returns_documents (sending_event_id, file_reference, job_id, type, name, content_type, size,
         path, state, next_try_at)
       SELECT d.sending_event_id, d.file_reference, d.job_id, d.type, d.name, d.content_type, d.size, d.path,
           'pending', d.next_try_at
         FROM unnest($9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[],
           $16::text[], $17::bigint[])
           WITH ORDINALITY AS d (sending_event_id, file_reference, job_id, type, name, content_type, size, path,
             next_try_at, n)
         WHERE EXISTS (SELECT 1 FROM job)
         ORDER BY d.n
       ON CONFLICT (sending_event_id, file_reference) DO NOTHING
     )
     UPDATE returns_sources SET version = version + 1 WHERE $18 AND item_id = (SELECT source_id FROM job)`,
  ),
  // A pending document by the writer's clock ($1: its next try was set by one); a writing one when
  // its claim ran out by the database's (claimWriting).
  dueDocuments: q(
    'due-documents',
    `SELECT ${DOCUMENT_COLUMNS} FROM returns_documents
     WHERE (state = 'pending' AND next_try_at <= $1) OR (state = 'writing' AND next_try_at <= ${NOW_MS})
     ORDER BY next_try_at LIMIT $2`,
  ),
  pathUsedByOther: q(
    'path-used-by-other',
    `SELECT 1 FROM returns_documents WHERE path = $1 AND NOT (sending_event_id = $2 AND file_reference = $3)
     LIMIT 1`,
  ),
  pathsUsedByOthers: q(
    'paths-used-by-others',
    `SELECT c.n FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS c (path, sending_event_id, file_reference, n)
     WHERE EXISTS (SELECT 1 FROM returns_documents d WHERE d.path = c.path
       AND NOT (d.sending_event_id = c.sending_event_id AND d.file_reference = c.file_reference))`,
  ),
  // The marks around a proof's write into the ERP's folder are durable (SYNCED): a proof written
  // twice would put back one the ERP may have taken away.
  markWriting: q(
    'mark-writing',
    `WITH ${SYNCED} UPDATE returns_documents SET state = 'writing' WHERE sending_event_id = $1 AND file_reference = $2
       AND state IN ('pending', 'writing') AND EXISTS (SELECT 1 FROM synced) RETURNING 1 AS hit`,
  ),
  // One statement: of agents claiming at once, one gets the row (the others see it claimed). The
  // claim's end and whether one ran out are the database's clock's, never a host's ($4, the
  // writer's clock, only says whether a pending document's next try has come).
  claimWriting: q(
    'claim-writing',
    `WITH ${SYNCED} UPDATE returns_documents SET state = 'writing', next_try_at = ${NOW_MS} + $3::bigint
     WHERE sending_event_id = $1 AND file_reference = $2 AND EXISTS (SELECT 1 FROM synced)
       AND ((state = 'pending' AND next_try_at <= $4)
         OR (state = 'writing' AND (next_try_at <= ${NOW_MS} OR next_try_at = $5)))
     RETURNING next_try_at AS until`,
  ),
  // One statement: the document and its file's status version move together.
  markDone: q(
    'mark-done',
    `WITH ${SYNCED}, d AS (
       UPDATE returns_documents SET state = 'done', md5 = $1, done_at = $2, last_error = NULL
         WHERE sending_event_id = $3 AND file_reference = $4 AND EXISTS (SELECT 1 FROM synced) RETURNING 1
     )
     UPDATE returns_sources SET version = version + 1
       WHERE item_id = (SELECT source_id FROM returns_jobs WHERE job_id = $5)`,
  ),
  markFailed: q(
    'mark-failed',
    `UPDATE returns_documents SET state = 'pending', failures = failures + 1, last_error = $1, next_try_at = $2
     WHERE sending_event_id = $3 AND file_reference = $4 AND state <> 'done'`,
  ),
  markParked: q(
    'mark-parked',
    `UPDATE returns_documents SET state = 'parked', failures = failures + 1, last_error = $1
     WHERE sending_event_id = $2 AND file_reference = $3 AND state <> 'done'`,
  ),
  retryNow: q(
    'retry-now',
    `WITH u AS (
       UPDATE returns_documents SET state = 'pending', failures = 0, next_try_at = $1
         WHERE state = 'parked' OR (state = 'pending' AND failures > 0 AND next_try_at > $1) RETURNING 1
     ) SELECT count(*) AS n FROM u`,
  ),
  staleSources: q(
    'stale-sources',
    `SELECT ${SOURCE_COLUMNS} FROM returns_sources WHERE written_version < version ORDER BY item_id LIMIT $1`,
  ),
  finalPage: q(
    'final-page',
    `SELECT ${EVENT_COLUMNS} FROM returns_events WHERE final_day = $1 AND (final_at > $2 OR (final_at = $2 AND id > $3))
     ORDER BY final_at, id LIMIT $4`,
  ),
  countFinalOn: q('count-final-on', 'SELECT count(*) AS n FROM returns_events WHERE final_day = $1'),
  csvDaysDue: q(
    'csv-days-due',
    // Day by day through returns_events_day (one seek per day), not a DISTINCT over a year of events.
    `WITH RECURSIVE days (day) AS (
       SELECT min(final_day) FROM returns_events
       UNION ALL
       SELECT (SELECT min(final_day) FROM returns_events WHERE final_day > days.day) FROM days WHERE days.day < $1
     )
     SELECT day FROM days WHERE day < $1 AND day NOT IN (SELECT day FROM returns_csv_days) ORDER BY day`,
  ),
  // Durable (SYNCED): a daily CSV is written into the ERP's folder once.
  recordCsv: q(
    'record-csv',
    `WITH ${SYNCED} INSERT INTO returns_csv_days (day, rows, written_at) SELECT $1, $2, $3 FROM synced
     ON CONFLICT (day) DO UPDATE SET rows = EXCLUDED.rows, written_at = EXCLUDED.written_at`,
  ),
  counts: q(
    'counts',
    `SELECT (SELECT count(*) FROM returns_jobs) AS jobs,
       (SELECT count(*) FROM returns_jobs WHERE NOT done) AS open,
       (SELECT count(*) FROM returns_events) AS events,
       (SELECT count(*) FROM returns_documents) AS documents,
       (SELECT count(*) FROM returns_documents WHERE state = 'done') AS documents_done,
       (SELECT count(*) FROM returns_documents WHERE state = 'parked') AS documents_parked`,
  ),
};

const n = (row: Record<string, unknown> | undefined, key = 'n'): number => Number(row?.[key] ?? 0);

/**
 * BEGIN, the lock of one source's status file (LOCK_SPACE.statusFile, the item id folded to 32
 * bits: two sources sharing a key only wait for each other) and the source and its jobs read under
 * it, in one round trip: the simple query protocol, no parameters, the integers written in. The transaction
 * waits on the file's write, which may outlast the pool's idle-in-transaction limit: lifted for it
 * alone (it holds no row lock; a dead agent's connection ends with it). The read is a statement
 * after the lock's, so its snapshot holds what the lock's last holder committed.
 */
function beginWithStatusLock(itemId: number): BeginStatement {
  const key = Number(BigInt.asIntN(32, BigInt(itemId)));
  return `BEGIN; SELECT set_config('idle_in_transaction_session_timeout', '0', true) AS unbounded,
      pg_try_advisory_xact_lock(${LOCK_SPACE.statusFile}, ${key}) AS got;
    SELECT ${SOURCE_COLUMNS} FROM returns_sources WHERE item_id = ${integer(itemId)};
    ${jobsOfSourceText(integer(itemId))}`;
}

/** The status file written at `version`, marked so in the commit that releases its lock. */
function markedWritten(itemId: number, version: number): CommitStatement {
  return `UPDATE returns_sources SET written_version = GREATEST(written_version, ${integer(version)})
    WHERE item_id = ${integer(itemId)}; COMMIT`;
}

/** A number written into a statement's text: an integer, or nothing is sent. */
function integer(value: number): number {
  if (!Number.isSafeInteger(value)) throw new TypeError(`expected an integer, not ${value}`);
  return value;
}

export class PostgresReturnsStore implements ReturnsStore {
  readonly location: string;

  private constructor(private readonly session: PgSession) {
    this.location = session.location;
  }

  /** Connects and brings the returns tables to this agent's version (creating them the first time). */
  static async open(
    connection: PostgresConnection,
    now: number,
    log?: Logger,
  ): Promise<PostgresReturnsStore> {
    // A status file's write holds one connection for its lock and reads through another. Commits
    // as returns.sqlite's (synchronous=NORMAL): a crash of the agent loses none; one of the database
    // server may lose the last polls and status marks, which the follower repeats (jobs come back
    // with the history cursor they were recorded with), never a webhook's poll, a re-send's job,
    // or the marks around a proof or daily CSV written for the ERP (SYNCED).
    const session = PgSession.open(
      connection,
      { max: Math.max(2, connection.poolSize), unsyncedCommits: true },
      log,
    );
    try {
      await migrateComponent(session, RETURNS_COMPONENT, now);
      return new PostgresReturnsStore(session);
    } catch (err) {
      await session.end();
      throw err;
    }
  }

  /** The store when the agent has created it before; undefined (nothing created) when not. */
  static async openExisting(
    connection: PostgresConnection,
    now: number,
  ): Promise<PostgresReturnsStore | undefined> {
    const session = PgSession.open(connection, { max: Math.min(2, connection.poolSize) });
    try {
      if ((await existingVersion(session, RETURNS_COMPONENT)) === undefined) {
        await session.end();
        return undefined;
      }
      await migrateComponent(session, RETURNS_COMPONENT, now);
      return new PostgresReturnsStore(session);
    } catch (err) {
      await session.end();
      throw err;
    }
  }

  close(): Promise<void> {
    return this.session.end();
  }

  private async rows(doing: string, statement: Statement, values?: readonly unknown[]) {
    return asRows(await this.session.rows(`returns: ${doing}`, statement, values));
  }

  private transaction<T>(doing: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.session.transaction(`returns: ${doing}`, fn);
  }

  async getMeta(key: string): Promise<string | undefined> {
    const [row] = await this.rows('getMeta', S.getMeta, [key]);
    return row ? (row['value'] as string) : undefined;
  }

  /**
   * One statement per job: its source the first time, the job, the version bump. A single job, the
   * feed's usual batch, carries the cursor in the same statement, with no transaction around it.
   * A statement whose source insert lost a race (another agent inserting the same source, or
   * taking its plain status path, at that moment) writes nothing; the next one, a new snapshot,
   * sees what that agent committed.
   */
  async addJobs(jobs: readonly NewJob[], cursorKey: string, cursor: string, now: number): Promise<number> {
    const planned = jobs.map((job) => addJobValues(job, now));
    if (planned.length === 1) {
      const row = await this.session.one('returns: addJobs', S.addJob, [
        ...planned[0]!,
        true,
        cursorKey,
        cursor,
      ]);
      if (row?.['placed'] === true) return n(row, 'added');
    }
    return this.transaction('addJobs', async (tx) => {
      let added = 0;
      for (const values of planned) added += await addJob(tx, values);
      await tx.rows(S.setMeta, [cursorKey, cursor]);
      return added;
    });
  }

  async job(jobId: string): Promise<JobRow | undefined> {
    const [row] = await this.rows('job', S.job, [jobId]);
    return row && toJob(row);
  }

  async dueJobs(now: number, limit: number): Promise<JobRow[]> {
    return (await this.rows('dueJobs', S.dueJobs, [now, limit])).map(toJob);
  }

  async openJobs(): Promise<number> {
    return n((await this.rows('openJobs', S.openJobs))[0]);
  }

  async pollSoon(jobId: string, at: number): Promise<boolean> {
    return (await this.rows('pollSoon', S.pollSoon, [at, jobId])).length > 0;
  }

  async reopenJob(jobId: string, now: number): Promise<boolean> {
    return (await this.rows('reopenJob', S.reopenJob, [now, jobId])).length > 0;
  }

  async deferJob(jobId: string, at: number): Promise<void> {
    await this.rows('deferJob', S.deferJob, [at, jobId]);
  }

  pollUnfinishedWithin(now: number, spreadMs: number): Promise<number> {
    return this.transaction('pollUnfinishedWithin', async (tx) => {
      const moved = await tx.rows(S.pollUnfinished, [now, Math.max(0, Math.floor(spreadMs))]);
      await tx.rows(S.deleteMeta, [POLL_UNFINISHED_KEY]);
      return moved.length;
    });
  }

  async requestPollOfUnfinished(at: number): Promise<void> {
    await this.rows('requestPollOfUnfinished', S.requestPoll, [POLL_UNFINISHED_KEY, String(at)]);
  }

  async source(itemId: number): Promise<SourceRow | undefined> {
    const [row] = await this.rows('source', S.source, [itemId]);
    return row && toSource(row);
  }

  async jobsOfSource(itemId: number): Promise<JobRow[]> {
    return (await this.rows('jobsOfSource', S.jobsOfSource, [itemId])).map(toJob);
  }

  async eventsOfJobPage(jobId: string, afterId: string, limit: number): Promise<EventRow[]> {
    return (await this.rows('eventsOfJobPage', S.eventPage, [jobId, afterId, limit])).map(toEvent);
  }

  async eventsWithDocumentsPage(
    jobId: string,
    afterId: string,
    limit: number,
  ): Promise<EventWithDocuments[]> {
    const events = await this.eventsOfJobPage(jobId, afterId, limit);
    const documents = await this.documentsOfEvents(events.map((e) => e.id));
    return events.map((event) => ({ event, documents: documents.get(event.id) ?? [] }));
  }

  private async documentsOfEvents(ids: readonly string[]): Promise<Map<string, DocumentRow[]>> {
    if (ids.length === 0) return new Map();
    return byEvent((await this.rows('documentsOfEvents', S.documentsOfEvents, [ids])).map(toDocument));
  }

  async allDocumentsDone(itemId: number): Promise<boolean> {
    const [row] = await this.rows('allDocumentsDone', S.allDocumentsDone, [itemId]);
    return row?.['pending'] === 0;
  }

  async event(id: string): Promise<EventRow | undefined> {
    const [row] = await this.rows('event', S.event, [id]);
    return row && toEvent(row);
  }

  async eventsById(ids: readonly string[]): Promise<Map<string, EventRow>> {
    if (ids.length === 0) return new Map();
    const events = (await this.rows('eventsById', S.events, [ids])).map(toEvent);
    return new Map(events.map((e) => [e.id, e]));
  }

  async documentsOfEvent(sendingEventId: string): Promise<DocumentRow[]> {
    return (await this.rows('documentsOfEvent', S.documentsOfEvent, [sendingEventId])).map(toDocument);
  }

  async recordPoll(poll: PollRecord, now: number): Promise<void> {
    await this.rows('recordPoll', S.recordPoll, [
      poll.status,
      poll.jobJson,
      poll.nextPollAt,
      poll.unchangedPolls,
      poll.done,
      poll.gaveUp ?? null,
      now,
      poll.jobId,
      poll.changed,
    ]);
  }

  async recordEvents(
    jobId: string,
    events: readonly PolledEvent[],
    documents: readonly NewDocument[],
    now: number,
    changed: boolean,
  ): Promise<void> {
    // The last of each event id (an upsert may not touch one row twice), with the first final time
    // a copy gave, as one upsert per copy keeps it.
    const byId = new Map<string, PolledEvent>();
    for (const e of events) {
      const seen = byId.get(e.id);
      byId.set(e.id, seen?.finalAt !== undefined ? { ...e, finalAt: seen.finalAt, ...finalDayOf(seen) } : e);
    }
    const last = [...byId.values()];
    await this.rows('recordEvents', S.recordEvents, [
      jobId,
      last.map((e) => e.id),
      last.map((e) => e.businessStatus),
      last.map((e) => e.status),
      last.map((e) => e.finalAt ?? null),
      last.map((e) => e.finalDay ?? null),
      last.map((e) => e.json),
      now,
      documents.map((d) => d.sendingEventId),
      documents.map((d) => d.fileReference),
      documents.map((d) => d.jobId),
      documents.map((d) => d.type),
      documents.map((d) => d.name ?? null),
      documents.map((d) => d.contentType ?? null),
      documents.map((d) => d.size ?? null),
      documents.map((d) => d.path),
      documents.map((d) => d.nextTryAt),
      changed,
    ]);
  }

  async dueDocuments(now: number, limit: number): Promise<DocumentRow[]> {
    return (await this.rows('dueDocuments', S.dueDocuments, [now, limit])).map(toDocument);
  }

  async pathUsedByOther(path: string, sendingEventId: string, fileReference: string): Promise<boolean> {
    return (
      (await this.rows('pathUsedByOther', S.pathUsedByOther, [path, sendingEventId, fileReference])).length >
      0
    );
  }

  async pathsUsedByOthers(
    named: readonly { path: string; sendingEventId: string; fileReference: string }[],
  ): Promise<boolean[]> {
    if (named.length === 0) return [];
    const rows = await this.rows('pathsUsedByOthers', S.pathsUsedByOthers, [
      named.map((c) => c.path),
      named.map((c) => c.sendingEventId),
      named.map((c) => c.fileReference),
    ]);
    const taken = new Set(rows.map((r) => Number(r['n'])));
    return named.map((_, i) => taken.has(i + 1));
  }

  async markDocumentWriting(d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>): Promise<boolean> {
    return (
      (await this.rows('markDocumentWriting', S.markWriting, [d.sendingEventId, d.fileReference])).length > 0
    );
  }

  /** ReturnsStore.claimDocument by the database's clock: the agents sharing it may disagree on theirs. */
  async claimDocument(
    d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>,
    claim: DocumentClaim,
  ): Promise<number | undefined> {
    const [row] = await this.rows('claimDocument', S.claimWriting, [
      d.sendingEventId,
      d.fileReference,
      Math.max(0, Math.round(claim.ms)),
      claim.now,
      claim.held ?? null,
    ]);
    return row ? Number(row['until']) : undefined;
  }

  async markDocumentDone(d: DocumentRow, md5: string | undefined, now: number): Promise<void> {
    await this.rows('markDocumentDone', S.markDone, [
      md5 ?? null,
      now,
      d.sendingEventId,
      d.fileReference,
      d.jobId,
    ]);
  }

  async markDocumentFailed(d: DocumentRow, error: string, nextTryAt: number): Promise<void> {
    await this.rows('markDocumentFailed', S.markFailed, [
      error,
      nextTryAt,
      d.sendingEventId,
      d.fileReference,
    ]);
  }

  async markDocumentParked(d: DocumentRow, error: string): Promise<void> {
    await this.rows('markDocumentParked', S.markParked, [error, d.sendingEventId, d.fileReference]);
  }

  async retryFailedDocumentsNow(now: number): Promise<number> {
    return n((await this.rows('retryFailedDocumentsNow', S.retryNow, [now]))[0]);
  }

  async staleSources(limit: number): Promise<SourceRow[]> {
    return (await this.rows('staleSources', S.staleSources, [limit])).map(toSource);
  }

  /**
   * A transaction holding an advisory lock of the source (beginWithStatusLock) while `write` runs
   * on other pooled connections; another agent's try finds it held and leaves the file to this one.
   */
  async writeStatusAlone(
    itemId: number,
    write: (source: SourceRow, jobs: JobRow[]) => Promise<boolean>,
  ): Promise<boolean> {
    const written = await this.session.transaction(
      'returns: writeStatusAlone',
      async (_tx, [, lock, found, jobs]) => {
        const [row] = asRows(found ?? []);
        if (lock?.[0]?.['got'] !== true || !row) return undefined;
        const source = toSource(row);
        return (await write(source, asRows(jobs ?? []).map(toJob))) ? source.version : undefined;
      },
      beginWithStatusLock(itemId),
      (version) => (version === undefined ? 'COMMIT' : markedWritten(itemId, version)),
    );
    return written !== undefined;
  }

  async eventsFinalOnPage(
    day: string,
    after: { finalAt: number; id: string } | undefined,
    limit: number,
  ): Promise<FinalEventEntry[]> {
    const events = (
      await this.rows('eventsFinalOnPage', S.finalPage, [day, after?.finalAt ?? -1, after?.id ?? '', limit])
    ).map(toEvent);
    if (events.length === 0) return [];
    const jobs = new Map(
      (await this.rows('eventsFinalOnPage', S.jobs, [[...new Set(events.map((e) => e.jobId))]]))
        .map(toJob)
        .map((j) => [j.jobId, j]),
    );
    const sources = new Map(
      (
        await this.rows('eventsFinalOnPage', S.sources, [
          [...new Set([...jobs.values()].map((j) => j.sourceId))],
        ])
      )
        .map(toSource)
        .map((s) => [s.itemId, s]),
    );
    const documents = await this.documentsOfEvents(events.map((e) => e.id));
    return events.map((event) => {
      const job = jobs.get(event.jobId)!;
      return { event, job, source: sources.get(job.sourceId)!, documents: documents.get(event.id) ?? [] };
    });
  }

  async countFinalOn(day: string): Promise<number> {
    return n((await this.rows('countFinalOn', S.countFinalOn, [day]))[0]);
  }

  async csvDaysDue(today: string): Promise<string[]> {
    return (await this.rows('csvDaysDue', S.csvDaysDue, [today])).map((r) => r['day'] as string);
  }

  async recordCsv(day: string, rows: number, now: number): Promise<void> {
    await this.rows('recordCsv', S.recordCsv, [day, rows, now]);
  }

  async counts(): Promise<ReturnsCounts> {
    const [row] = await this.rows('counts', S.counts);
    return {
      jobs: n(row, 'jobs'),
      open: n(row, 'open'),
      events: n(row, 'events'),
      documents: n(row, 'documents'),
      documentsDone: n(row, 'documents_done'),
      documentsParked: n(row, 'documents_parked'),
    };
  }
}

/** $1–$16 of S.addJob: the source, both status paths, the job. */
function addJobValues(job: NewJob, now: number): unknown[] {
  const s = job.source;
  return [
    s.itemId,
    s.folder,
    s.fileName,
    s.sha256,
    s.claimedAt,
    s.day,
    job.statusPath(false),
    job.statusPath(true),
    job.jobId,
    job.itemId,
    job.rowIndex ?? null,
    job.label ?? null,
    job.jobName ?? null,
    job.recordedAt,
    job.firstPollAt,
    now,
  ];
}

/** Races lost in a row before giving up: each needs another agent's insert of this very source. */
const ADD_JOB_TRIES = 3;

async function addJob(tx: Tx, values: unknown[]): Promise<number> {
  for (let tries = 1; ; tries++) {
    const row = await tx.one(S.addJob, [...values, false, null, null]);
    if (row?.['placed'] === true) return n(row, 'added');
    if (tries === ADD_JOB_TRIES) {
      throw new DocexError(
        'DOCEX_JOURNAL_UNAVAILABLE',
        `returns: the source of job ${String(values[8])} was not recorded after ${tries} tries (other agents inserting it)`,
        { details: { itemId: values[0], jobId: values[8] } },
      );
    }
  }
}

const finalDayOf = (event: PolledEvent) => (event.finalDay === undefined ? {} : { finalDay: event.finalDay });
