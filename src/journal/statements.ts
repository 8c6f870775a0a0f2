import type Database from 'better-sqlite3';
import type { SqlRow as Row } from '../core/sqlite-store.js';
import { ITEM_COLUMNS } from './schema.js';
import { type ItemState, UNFINISHED_STATES_SQL } from './states.js';
import type { HistoryEntry } from './types.js';

// biome-ignore lint/suspicious/noExplicitAny: better-sqlite3 binds positional and named parameters alike
type Stmt = Database.Statement<any[], Row>;

// Read by the journal and its read-only reader alike.
export const ITEM_BY_ID = `SELECT ${ITEM_COLUMNS} FROM items WHERE id = ?`;
export const ITEM_BY_JOB_ID = `SELECT ${ITEM_COLUMNS} FROM items WHERE job_id = ? ORDER BY id DESC LIMIT 1`;
export const ITEMS_BY_PATH = `SELECT ${ITEM_COLUMNS} FROM items
  WHERE kind = 'file' AND (source_path = ? OR claimed_path = ?) ORDER BY id DESC`;
// Every state but the final ones, listed so the items_state index serves the query: at start-up a
// journal of a year's finished items is not read to find the handful left unfinished.
export const UNFINISHED_ITEMS = `SELECT ${ITEM_COLUMNS} FROM items WHERE state IN (${UNFINISHED_STATES_SQL}) ORDER BY id`;
/**
 * Pruning (JournalStore.pruneFinished): finished files last moved before the cutoff, by id range,
 * that still hold something to prune. A done file pruned before keeps its row and nothing else (its
 * history and rows went in the same transaction): it is passed over, or every pass of a year's
 * journal would go through the months of files pruned already, four statements each.
 */
export const PRUNE_CANDIDATES = `SELECT id, state FROM items
  WHERE id > ? AND id <= ? AND kind = 'file' AND state IN ('done', 'rejected') AND updated_at < ?
    AND (state = 'rejected' OR EXISTS (SELECT 1 FROM history h WHERE h.item_id = items.id))
  ORDER BY id`;
export const HISTORY_OF_ITEM =
  'SELECT item_id, from_state, to_state, at, detail FROM history WHERE item_id = ? ORDER BY id';

export function toHistoryEntry(r: Row): HistoryEntry {
  return {
    itemId: r['item_id'] as number,
    from: (r['from_state'] ?? undefined) as ItemState | undefined,
    to: r['to_state'] as ItemState,
    at: r['at'] as number,
    detail: r['detail'] === null ? undefined : (JSON.parse(r['detail'] as string) as Record<string, unknown>),
  };
}

/** Every statement the journal runs, prepared once when it opens. */
export function prepareStatements(db: Database.Database) {
  const p = (sql: string): Stmt => db.prepare(sql) as Stmt;
  return {
    get: p(ITEM_BY_ID),
    modeOf: p('SELECT mode FROM items WHERE id = ?'),
    byJobId: p(ITEM_BY_JOB_ID),
    byPath: p(ITEMS_BY_PATH),
    rowsOf: p(`SELECT ${ITEM_COLUMNS} FROM items WHERE parent_id = ? ORDER BY row_index`),
    recent: p(
      `SELECT ${ITEM_COLUMNS} FROM items WHERE kind = 'file' ORDER BY updated_at DESC, id DESC LIMIT ?`,
    ),
    unfinished: p(UNFINISHED_ITEMS),
    childStates: p('SELECT state FROM items WHERE parent_id = ? ORDER BY row_index'),
    sameFileUnfinished: p(
      `SELECT ${ITEM_COLUMNS} FROM items
       WHERE kind = 'file' AND folder = ? AND sha256 = ? AND source_path = ? AND state = 'claimed'
       ORDER BY id LIMIT 1`,
    ),
    // A duplicate is the same content for the same folder or the same workflow, sent as the same
    // managed company, not counting drops that were rejected (a fixed configuration may take the
    // same file again). Two companies sending the same bytes are two senders, not a duplicate; a
    // claim or an item without a recorded company (one recorded before the journal kept it) is
    // taken as any company's.
    earlierContent: p(
      `SELECT ${ITEM_COLUMNS} FROM items
       WHERE kind = 'file' AND sha256 = @sha256 AND (folder = @folder OR workflow_id = @workflowId)
         AND (@company IS NULL OR managed_company_id IS NULL OR managed_company_id = @company)
         AND state <> 'rejected'
       ORDER BY id LIMIT 1`,
    ),
    insertFile: p(
      `INSERT INTO items (kind, folder, workflow_id, managed_company_id, mode, file_name, source_path, relative_path,
         claimed_path, size, mtime_ms, sha256, allow_duplicates, state, reject_code, reject_reason, duplicate_of,
         created_at, updated_at)
       VALUES ('file', @folder, @workflowId, @managedCompanyId, @mode, @fileName, @sourcePath, @relativePath,
         @claimedPath, @size, @mtimeMs, @sha256, @allowDuplicates, @state, @rejectCode, @rejectReason, @duplicateOf,
         @now, @now)`,
    ),
    insertRow: p(
      `INSERT INTO items (parent_id, kind, row_index, folder, workflow_id, managed_company_id, mode, file_name, sha256,
         allow_duplicates, state, label, payload_sha256, reject_code, reject_reason, created_at, updated_at)
       SELECT id, 'row', @rowIndex, folder, workflow_id, managed_company_id, mode, file_name, sha256,
         allow_duplicates, @state, @label, @payloadSha256, @rejectCode, @rejectReason, @now, @now
       FROM items WHERE id = @parentId`,
    ),
    setState: p(`UPDATE items SET state = @state, upload_url = NULL, updated_at = @now WHERE id = @id`),
    setCreating: p(
      `UPDATE items SET state = 'creating', attempt = @attempt, job_name = @jobName, job_id = NULL,
         upload_url = NULL, upload_deadline = NULL, updated_at = @now WHERE id = @id`,
    ),
    setCreated: p(
      `UPDATE items SET state = 'created', job_id = @jobId, upload_url = @url, upload_deadline = @deadline,
         updated_at = @now WHERE id = @id`,
    ),
    setUploaded: p(
      `UPDATE items SET state = 'uploaded', uploaded_md5 = @md5, upload_url = NULL, updated_at = @now WHERE id = @id`,
    ),
    setRejected: p(
      `UPDATE items SET state = 'rejected', reject_code = @code, reject_reason = @reason, upload_url = NULL,
         updated_at = @now WHERE id = @id`,
    ),
    forgetUrl: p(
      'UPDATE items SET upload_url = NULL, updated_at = ? WHERE id = ? AND upload_url IS NOT NULL',
    ),
    uploadUrl: p('SELECT upload_url FROM items WHERE id = ?'),
    countLostAnswer: p(
      'UPDATE items SET lost_answers = lost_answers + 1, orphan_jobs = orphan_jobs + @orphan WHERE id = @id',
    ),
    failedTry: p(
      `UPDATE items SET failed_tries = failed_tries + @add, next_try_at = @nextTryAt, last_failure_code = @code
       WHERE id = @id`,
    ),
    clearTries: p('UPDATE items SET failed_tries = 0, next_try_at = NULL WHERE id = ?'),
    insertHistory: p(
      'INSERT INTO history (item_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)',
    ),
    history: p(HISTORY_OF_ITEM),
    counts: p('SELECT kind, state, count(*) AS n FROM items GROUP BY kind, state'),
    pruneCandidates: p(PRUNE_CANDIDATES),
    pruneRowsHistory: p('DELETE FROM history WHERE item_id IN (SELECT id FROM items WHERE parent_id = ?)'),
    pruneRows: p('DELETE FROM items WHERE parent_id = ?'),
    pruneHistory: p('DELETE FROM history WHERE item_id = ?'),
    pruneItem: p("DELETE FROM items WHERE id = ? AND state = 'rejected'"),
    maxId: p('SELECT max(id) AS id FROM items'),
    inspectionStarting: p(
      `INSERT INTO inspections (path, started_at) VALUES (?, ?)
       ON CONFLICT (path) DO UPDATE SET interrupted = interrupted + 1, started_at = excluded.started_at`,
    ),
    inspectionEnded: p('DELETE FROM inspections WHERE path = ?'),
    interruptedInspections: p(
      'SELECT interrupted + 1 AS n FROM inspections WHERE path = ? AND started_at < ?',
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
