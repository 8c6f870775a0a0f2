/**
 * The journal's read API on PostgreSQL (reader.ts's queries): a small pool of its own whose
 * sessions are read-only (default_transaction_read_only=on). It never migrates and never writes;
 * opening it checks that the database holds a journal at the version this agent reads.
 *
 * The two feeds that follow history by id (doneJobsAfter, historyAfter) read only up to a horizon:
 * on a server with concurrent writers, ids are taken when an entry is inserted, not when it
 * commits, so entry 41 may commit after entry 42 and a cursor already past 42 would skip it for
 * good. Writers take their history ids under an advisory lock held shared until they commit; the
 * reader tries that lock exclusively for one statement and, when no writer is in the middle of its
 * commit, reads the newest id: every id up to it is committed or never will be. The reader only
 * tries, never waits: a waiting exclusive request would queue every writer's shared one behind it,
 * and a writer frozen before its COMMIT (another agent's process stopped) would then stall every
 * agent's intake. After a few quick tries it keeps its last horizon (nothing new this round).
 */

import type { Logger } from '../../core/logger.js';
import type { PostgresConnection } from '../location.js';
import {
  toDoneJobItem,
  toHistoryStep,
  toHistoryTally,
  toPendingUpload,
  toUnfinishedFile,
  toWaitingFiles,
} from '../read-rows.js';
import type { JournalItem } from '../schema.js';
import { UNFINISHED_STATES_SQL } from '../states.js';
import type { JournalReader } from '../store.js';
import type {
  DoneJobItem,
  FileMatch,
  HistoryEntry,
  HistoryStep,
  HistoryTally,
  PendingUpload,
  UnfinishedFile,
  WaitingFiles,
} from '../types.js';
import { PgSession, type Statement } from './pool.js';
import { historyEntryOf, itemOf } from './rows.js';
import { checkVersion, LOCK_SPACE } from './schema.js';
import { STATEMENTS } from './statements.js';

/**
 * Tries of the history lock per horizon read, with waits of 1, 2, 4 … ms between them (about 1 s
 * in all): commits hold it for a round trip, so a busy journal lets a try through within a few.
 */
const HORIZON_TRIES = 10;

/** A reader needs few connections: its callers poll. */
const READER_POOL_SIZE = 2;

const s = (name: string, text: string): Statement => ({ name: `docex_reader_${name}`, text });
/** `limit` is the statement's last parameter. */
const fileIds = (name: string, where: string, limit: number) =>
  s(name, `SELECT id FROM items WHERE kind = 'file' AND ${where} ORDER BY id DESC LIMIT $${limit}`);

const READS = {
  /** The newest history id whose transaction has ended (see the module's comment). */
  horizon: s(
    'horizon',
    `SELECT CASE WHEN pg_try_advisory_xact_lock(${LOCK_SPACE.history}, 1)
       THEN coalesce((SELECT max(id) FROM history), 0) END AS horizon`,
  ),
  doneJobs: s(
    'done_jobs',
    `SELECT h.id AS hid, h.at AS done_at, i.id, i.kind, i.parent_id, i.row_index, i.folder, i.file_name,
       i.sha256, i.job_id, i.job_name, i.label, i.created_at, i.source_path, i.relative_path,
       p.folder AS p_folder, p.file_name AS p_file_name, p.source_path AS p_source_path, p.relative_path AS p_relative_path, p.sha256 AS p_sha256, p.created_at AS p_created_at
     FROM history h JOIN items i ON i.id = h.item_id LEFT JOIN items p ON p.id = i.parent_id
     WHERE h.id > $1 AND h.id <= $2 AND h.to_state = 'done' AND i.job_id IS NOT NULL
     ORDER BY h.id LIMIT $3`,
  ),
  history: s(
    'history_after',
    `SELECT h.id, h.from_state, h.to_state, i.kind, i.folder, i.reject_code
     FROM history h JOIN items i ON i.id = h.item_id
     WHERE h.id > $1 AND h.id <= $2 ORDER BY h.id LIMIT $3`,
  ),
  historyTally: s(
    'history_tally',
    `SELECT i.folder, i.kind, h.from_state, h.to_state, i.reject_code, count(*) AS entries
     FROM history h JOIN items i ON i.id = h.item_id
     WHERE h.id > $1 AND h.id <= $2
     GROUP BY i.folder, i.kind, h.from_state, h.to_state, i.reject_code`,
  ),
  waiting: s(
    'waiting',
    `SELECT folder, state, count(*) AS n, min(created_at) AS oldest FROM items
     WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL})
     GROUP BY folder, state ORDER BY folder, state`,
  ),
  pending: s(
    'pending',
    `SELECT i.id, i.folder, i.file_name, i.upload_deadline, i.owner,
       (SELECT max(h.at) FROM history h WHERE h.item_id = i.id AND h.to_state = 'created') AS opened_at
     FROM items i
     WHERE i.state = 'created' AND i.upload_deadline IS NOT NULL AND i.mode <> 'payload-word'
     ORDER BY i.upload_deadline, i.id`,
  ),
  unfinishedBefore: s(
    'unfinished_before',
    `SELECT id, folder, file_name, state, created_at, job_id, owner FROM items
     WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL}) AND created_at <= $1 ORDER BY id LIMIT $2`,
  ),
  idsByName: fileIds('ids_by_name', 'file_name = $1', 2),
  idsByContent: fileIds('ids_by_content', 'sha256 = $1', 2),
  idsByPlacedFile: fileIds('ids_by_placed_file', 'sha256 = $1 AND folder = $2 AND file_name = $3', 4),
  // The item look-ups are the journal's own statements.
  get: STATEMENTS.get,
  byJobId: STATEMENTS.byJobId,
  byPath: STATEMENTS.byPath,
  itemHistory: STATEMENTS.history,
} as const;

export class PostgresJournalReader implements JournalReader {
  readonly location: string;

  /** The last horizon read: kept while writers are in the middle of their commits. */
  private lastHorizon = 0;

  private constructor(private readonly db: PgSession) {
    this.location = db.location;
  }

  /** Connects read-only and checks the schema; never creates or migrates it. */
  static async open(
    connection: PostgresConnection,
    options: { log?: Logger } = {},
  ): Promise<PostgresJournalReader> {
    const db = PgSession.open(
      connection,
      { readOnly: true, max: Math.min(READER_POOL_SIZE, connection.poolSize) },
      options.log,
    );
    try {
      await checkVersion(db);
      return new PostgresJournalReader(db);
    } catch (err) {
      await db.end().catch(() => undefined);
      throw err;
    }
  }

  /** The newest history id no later commit can come in under (or the last one read). */
  private async horizon(doing: string): Promise<number> {
    for (let tried = 0; tried < HORIZON_TRIES; tried++) {
      const horizon = (await this.db.one(doing, READS.horizon))?.['horizon'];
      if (horizon !== null && horizon !== undefined) {
        this.lastHorizon = Math.max(this.lastHorizon, Number(horizon));
        return this.lastHorizon;
      }
      // Commits take a few ms: look again shortly.
      await new Promise((resolve) => setTimeout(resolve, 2 ** tried));
    }
    return this.lastHorizon;
  }

  async doneJobsAfter(cursor: number, limit: number): Promise<DoneJobItem[]> {
    const horizon = await this.horizon('doneJobsAfter');
    if (horizon <= cursor) return [];
    return (await this.db.rows('doneJobsAfter', READS.doneJobs, [cursor, horizon, limit])).map(toDoneJobItem);
  }

  async historyAfter(cursor: number, limit: number): Promise<HistoryStep[]> {
    const horizon = await this.horizon('historyAfter');
    if (horizon <= cursor) return [];
    return (await this.db.rows('historyAfter', READS.history, [cursor, horizon, limit])).map(toHistoryStep);
  }

  async historyTally(cursor: number, span: number): Promise<{ upTo: number; tallies: HistoryTally[] }> {
    const upTo = Math.min(await this.horizon('historyTally'), cursor + span);
    if (upTo <= cursor) return { upTo: cursor, tallies: [] };
    const rows = await this.db.rows('historyTally', READS.historyTally, [cursor, upTo]);
    return { upTo, tallies: rows.map(toHistoryTally) };
  }

  async pendingUploads(): Promise<PendingUpload[]> {
    return (await this.db.rows('pendingUploads', READS.pending)).map(toPendingUpload);
  }

  async waiting(): Promise<WaitingFiles[]> {
    return (await this.db.rows('waiting', READS.waiting)).map(toWaitingFiles);
  }

  async unfinishedSince(cutoff: number, limit: number): Promise<UnfinishedFile[]> {
    return (await this.db.rows('unfinishedSince', READS.unfinishedBefore, [cutoff, limit])).map(
      toUnfinishedFile,
    );
  }

  async fileItemIds(match: FileMatch, limit: number): Promise<number[]> {
    const rows =
      'fileName' in match
        ? await this.db.rows('fileItemIds', READS.idsByName, [match.fileName, limit])
        : match.placed
          ? await this.db.rows('fileItemIds', READS.idsByPlacedFile, [
              match.sha256,
              match.placed.folder,
              match.placed.fileName,
              limit,
            ])
          : await this.db.rows('fileItemIds', READS.idsByContent, [match.sha256, limit]);
    return rows.map((r) => Number(r['id']));
  }

  async get(itemId: number): Promise<JournalItem | undefined> {
    const row = await this.db.one('get', READS.get, [itemId]);
    return row ? itemOf(row) : undefined;
  }

  async byJobId(jobId: string): Promise<JournalItem | undefined> {
    const row = await this.db.one('byJobId', READS.byJobId, [jobId]);
    return row ? itemOf(row) : undefined;
  }

  async byPath(path: string): Promise<JournalItem[]> {
    return (await this.db.rows('byPath', READS.byPath, [path])).map(itemOf);
  }

  async history(itemId: number): Promise<HistoryEntry[]> {
    return (await this.db.rows('history', READS.itemHistory, [itemId])).map(historyEntryOf);
  }

  async close(): Promise<void> {
    await this.db.end();
  }
}
