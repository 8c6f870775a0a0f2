/**
 * The journal's read API for everyone but the intake: the return path's feed of done jobs, the ops
 * totals and upload windows, the blocked-file check, the status command's look-ups. Each reader has
 * a read-only connection of its own beside the writing agent (WAL lets it in), its statements
 * prepared once when it opens. The journal's tables are read nowhere else; never the upload URL.
 */

import { DocexError } from '../core/errors.js';
import { Database } from '../core/sqlite.js';
import type { SqlRow as Row } from '../core/sqlite-store.js';
import {
  toDoneJobItem,
  toHistoryStep,
  toHistoryTally,
  toPendingUpload,
  toUnfinishedFile,
  toWaitingFiles,
} from './read-rows.js';
import { type JournalItem, SCHEMA_VERSION, toItem } from './schema.js';
import { HISTORY_OF_ITEM, ITEM_BY_ID, ITEM_BY_JOB_ID, ITEMS_BY_PATH, toHistoryEntry } from './statements.js';
import { UNFINISHED_STATES_SQL } from './states.js';
import type { JournalReader } from './store.js';
import type {
  DoneJobItem,
  FileMatch,
  HistoryEntry,
  HistoryStep,
  HistoryTally,
  PendingUpload,
  UnfinishedFile,
  WaitingFiles,
} from './types.js';

/**
 * A reader's page cache, in KiB: SQLite's own default, not better-sqlite3's 16 MB. Its queries read
 * by index, but the metrics' first catch-up reads the whole history once (a year's retention:
 * 1.5 million entries), and with the larger cache that pass left 16 MB more in the resident set.
 */
export const READER_CACHE_KIB = 2000;

function prepareReads(db: Database) {
  const fileIds = (where: string) =>
    db.prepare(`SELECT id FROM items WHERE kind = 'file' AND ${where} ORDER BY id DESC LIMIT ?`);
  return {
    doneJobs: db.prepare(
      `SELECT h.id AS hid, h.at AS done_at, i.id, i.kind, i.parent_id, i.row_index, i.folder, i.file_name,
         i.sha256, i.job_id, i.job_name, i.label, i.created_at, i.source_path, i.relative_path,
         p.folder AS p_folder, p.file_name AS p_file_name, p.source_path AS p_source_path, p.relative_path AS p_relative_path, p.sha256 AS p_sha256, p.created_at AS p_created_at
       FROM history h JOIN items i ON i.id = h.item_id LEFT JOIN items p ON p.id = i.parent_id
       WHERE h.id > ? AND h.to_state = 'done' AND i.job_id IS NOT NULL
       ORDER BY h.id LIMIT ?`,
    ),
    history: db.prepare(
      `SELECT h.id, h.from_state, h.to_state, i.kind, i.folder, i.reject_code
       FROM history h JOIN items i ON i.id = h.item_id
       WHERE h.id > ? ORDER BY h.id LIMIT ?`,
    ),
    // Counted in the journal: a year of history is 1.5 million entries, an object each in JS.
    historyTally: db.prepare(
      `SELECT i.folder, i.kind, h.from_state, h.to_state, i.reject_code, count(*) AS entries
       FROM history h JOIN items i ON i.id = h.item_id
       WHERE h.id > ? AND h.id <= ?
       GROUP BY i.folder, i.kind, h.from_state, h.to_state, i.reject_code`,
    ),
    lastHistoryId: db.prepare('SELECT coalesce(max(id), 0) AS id FROM history'),
    // Every state but the final ones, listed so the items_state index serves the query.
    waiting: db.prepare(
      `SELECT folder, state, count(*) AS n, min(created_at) AS oldest FROM items
       WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL})
       GROUP BY folder, state`,
    ),
    pending: db.prepare(
      `SELECT i.id, i.folder, i.file_name, i.upload_deadline,
         (SELECT max(h.at) FROM history h WHERE h.item_id = i.id AND h.to_state = 'created') AS opened_at
       FROM items i
       WHERE i.state = 'created' AND i.upload_deadline IS NOT NULL AND i.mode <> 'payload-word'
       ORDER BY i.upload_deadline`,
    ),
    unfinishedBefore: db.prepare(
      `SELECT id, folder, file_name, state, created_at, job_id FROM items
       WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL}) AND created_at <= ? ORDER BY id LIMIT ?`,
    ),
    idsByName: fileIds('file_name = ?'),
    idsByContent: fileIds('sha256 = ?'),
    idsByPlacedFile: fileIds('sha256 = ? AND folder = ? AND file_name = ?'),
    get: db.prepare(ITEM_BY_ID),
    byJobId: db.prepare(ITEM_BY_JOB_ID),
    byPath: db.prepare(ITEMS_BY_PATH),
    itemHistory: db.prepare(HISTORY_OF_ITEM),
  };
}

/** The journal is at the version this agent reads: a reader neither migrates nor guesses. */
function checkVersion(db: Database): void {
  const hasVersions = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  const current = hasVersions
    ? ((db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0)
    : 0;
  if (current === SCHEMA_VERSION) return;
  const what =
    current > SCHEMA_VERSION
      ? `this agent reads up to ${SCHEMA_VERSION}: upgrade the agent`
      : `this agent reads version ${SCHEMA_VERSION}: start the agent, it migrates the journal`;
  throw new DocexError('DOCEX_JOURNAL_VERSION', `the journal has schema version ${current}; ${what}`, {
    details: { current, known: SCHEMA_VERSION },
  });
}

export class SqliteJournalReader implements JournalReader {
  private readonly reads: ReturnType<typeof prepareReads>;

  private constructor(private readonly db: Database) {
    this.reads = prepareReads(db);
  }

  /** Throws when the file does not exist (a reader never creates the journal). */
  static open(file: string, options: { busyTimeoutMs: number }): SqliteJournalReader {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs}`);
      db.pragma(`cache_size = -${READER_CACHE_KIB}`);
      checkVersion(db);
      return new SqliteJournalReader(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * Up to `limit` items that reached `done` with a job, recorded after `cursor`, in the order their
   * `done` was recorded (history ids grow with every commit, so an item finished late is never
   * skipped, as an item-id cursor would).
   */
  async doneJobsAfter(cursor: number, limit: number): Promise<DoneJobItem[]> {
    return (this.reads.doneJobs.all(cursor, limit) as Row[]).map(toDoneJobItem);
  }

  /** Up to `limit` history entries after the entry `cursor`, oldest first. */
  async historyAfter(cursor: number, limit: number): Promise<HistoryStep[]> {
    return (this.reads.history.all(cursor, limit) as Row[]).map(toHistoryStep);
  }

  async historyTally(cursor: number, span: number): Promise<{ upTo: number; tallies: HistoryTally[] }> {
    const last = Number((this.reads.lastHistoryId.get() as Row)['id']);
    const upTo = Math.min(last, cursor + span);
    if (upTo <= cursor) return { upTo: cursor, tallies: [] };
    return { upTo, tallies: (this.reads.historyTally.all(cursor, upTo) as Row[]).map(toHistoryTally) };
  }

  /** Jobs created whose upload is not confirmed yet, soonest deadline first. */
  async pendingUploads(): Promise<PendingUpload[]> {
    return (this.reads.pending.all() as Row[]).map(toPendingUpload);
  }

  /** Files not finished yet, by folder and state. */
  async waiting(): Promise<WaitingFiles[]> {
    return (this.reads.waiting.all() as Row[]).map(toWaitingFiles);
  }

  /** Up to `limit` files claimed at or before `cutoff` and not finished, oldest item first. */
  async unfinishedSince(cutoff: number, limit: number): Promise<UnfinishedFile[]> {
    return (this.reads.unfinishedBefore.all(cutoff, limit) as Row[]).map(toUnfinishedFile);
  }

  /**
   * Ids of the newest `limit` file items dropped under this bare name, or with this content (and,
   * when the place is known, in that folder under that name).
   */
  async fileItemIds(match: FileMatch, limit: number): Promise<number[]> {
    const rows =
      'fileName' in match
        ? this.reads.idsByName.all(match.fileName, limit)
        : match.placed
          ? this.reads.idsByPlacedFile.all(match.sha256, match.placed.folder, match.placed.fileName, limit)
          : this.reads.idsByContent.all(match.sha256, limit);
    return (rows as Row[]).map((r) => Number(r['id']));
  }

  async get(itemId: number): Promise<JournalItem | undefined> {
    const row = this.reads.get.get(itemId) as Row | undefined;
    return row ? toItem(row) : undefined;
  }

  async byJobId(jobId: string): Promise<JournalItem | undefined> {
    const row = this.reads.byJobId.get(jobId) as Row | undefined;
    return row ? toItem(row) : undefined;
  }

  async byPath(path: string): Promise<JournalItem[]> {
    return (this.reads.byPath.all(path, path) as Row[]).map(toItem);
  }

  async history(itemId: number): Promise<HistoryEntry[]> {
    return (this.reads.itemHistory.all(itemId) as Row[]).map(toHistoryEntry);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
