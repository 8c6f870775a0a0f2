/**
 * The ReturnsReader (../store-reader.ts) of the returns tables in the journal's PostgreSQL
 * database: one read-only connection (default_transaction_read_only), never a migration or a
 * write. Tables not created yet (an agent that never followed a job) read as nothing; a schema
 * newer than this agent's is refused as the store refuses it. One job's rows are read in one
 * read-only snapshot.
 */
import type { PostgresConnection } from '../../journal/location.js';
import { PgSession, type Statement } from '../../journal/postgres/pool.js';
import type { FollowedJob, ReturnsReader } from '../store-reader.js';
import { type Row, toDocument, toEvent, toJob } from '../store-rows.js';
import { DOCUMENT_COLUMNS, EVENT_COLUMNS, JOB_COLUMNS } from './rows.js';
import { existingVersion, RETURNS_COMPONENT } from './schema.js';

const q = (name: string, text: string): Statement => ({ name: `returns-reader-${name}`, text });

const S = {
  proofsArchived: q('proofs-archived', `SELECT count(*) AS n FROM returns_documents WHERE state = 'done'`),
  job: q('job', `SELECT ${JOB_COLUMNS} FROM returns_jobs WHERE job_id = $1`),
  events: q('events', `SELECT ${EVENT_COLUMNS} FROM returns_events WHERE job_id = $1 ORDER BY id`),
  documents: q(
    'documents',
    `SELECT ${DOCUMENT_COLUMNS} FROM returns_documents WHERE job_id = $1
     ORDER BY sending_event_id, type, file_reference`,
  ),
};

export class PostgresReturnsReader implements ReturnsReader {
  /** Known once the tables are there (they are never dropped). */
  private exists = false;

  private constructor(private readonly session: PgSession) {}

  /** Connects at the first read. */
  static async open(connection: PostgresConnection): Promise<PostgresReturnsReader> {
    return new PostgresReturnsReader(PgSession.open(connection, { readOnly: true, max: 1 }));
  }

  private async ready(): Promise<boolean> {
    if (!this.exists) this.exists = (await existingVersion(this.session, RETURNS_COMPONENT)) !== undefined;
    return this.exists;
  }

  async proofsArchived(): Promise<number | undefined> {
    try {
      if (!(await this.ready())) return undefined;
      const [row] = await this.session.rows('returns: proofsArchived', S.proofsArchived);
      return Number(row?.['n'] ?? 0);
    } catch {
      return undefined;
    }
  }

  async followedJob(jobId: string): Promise<FollowedJob | undefined> {
    if (!(await this.ready())) return undefined;
    return this.session.transaction(
      'returns: followedJob',
      async (tx) => {
        const job = (await tx.one(S.job, [jobId])) as Row | undefined;
        return {
          job: job ? toJob(job) : undefined,
          events: ((await tx.rows(S.events, [jobId])) as Row[]).map(toEvent),
          documents: ((await tx.rows(S.documents, [jobId])) as Row[]).map(toDocument),
        };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  close(): Promise<void> {
    return this.session.end();
  }
}
