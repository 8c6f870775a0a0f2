/**
 * Every statement PostgresJournal runs, in one place. Named: pg prepares each once per connection.
 * The upload URL is read by `uploadUrl` alone; items are read with PG_ITEM_COLUMNS.
 */

import { UNFINISHED_STATES_SQL } from '../states.js';
import type { BeginStatement, Statement } from './pool.js';
import { PG_ITEM_COLUMNS as C, LOCK_SPACE } from './schema.js';

const OPEN = "state NOT IN ('done', 'rejected')";

/** $n ms from the database's now(): every lease end is the database's time, never a host's. */
const fromNow = (param: string) => `now() + make_interval(secs => ${param}::float8 / 1000)`;

/** A CTE that makes its statement's own commit asynchronous (synchronous_commit off, local to it). */
const UNSYNCED = "unsynced AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))";

const s = (name: string, text: string): Statement => ({ name: `docex_journal_${name}`, text });

/** Every history insert holds the history lock shared (the return path's horizon, reader.ts). */
const HISTORY_BARRIER = `barrier AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(${LOCK_SPACE.history}, 1))`;

/** A claimed file's columns and their values, $1–$24 (insertFile, claimFile). */
const FILE_COLUMNS = `kind, folder, workflow_id, mode, file_name, source_path, claimed_path, size, mtime_ms,
  sha256, allow_duplicates, state, reject_code, reject_reason, duplicate_of, created_at, updated_at,
  owner, epoch, lease_until, attempt, job_name, managed_company_id, relative_path`;
const FILE_VALUES = `'file', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15,
  $16, CASE WHEN $16::text IS NULL THEN 0 ELSE 1 END,
  CASE WHEN $16::text IS NULL THEN NULL ELSE ${fromNow('$17')} END, $21, $22, $23, $24`;
/** The history entries of the moves the claim makes on the file inserted ($18–$20, at $15). */
const FILE_HISTORY = `logged AS (
  INSERT INTO history (item_id, from_state, to_state, at, detail)
  SELECT inserted.id, e.from_state, e.to_state, $15, e.detail::json
  FROM inserted, barrier, unnest($18::text[], $19::text[], $20::text[]) WITH ORDINALITY AS e (from_state, to_state, detail, n)
  ORDER BY e.n)`;

/** What a move adds to the lost-answer counters ($k, $k+1: 0 or 1 each), in the move's own UPDATE. */
const counters = (k: number) => `lost_answers = lost_answers + $${k}, orphan_jobs = orphan_jobs + $${k + 1}`;

export const STATEMENTS = {
  get: s('get', `SELECT ${C} FROM items WHERE id = $1`),
  /**
   * A row's move locks its file first (shared: the rows of a file move side by side; a takeover,
   * which updates the file, waits for them), and reads who holds it.
   */
  lockParentOf: s(
    'lock_parent_of',
    `SELECT id, owner, epoch, folder, file_name FROM items
     WHERE id = (SELECT parent_id FROM items WHERE id = $1) FOR SHARE`,
  ),
  getForUpdate: s('get_for_update', `SELECT ${C} FROM items WHERE id = $1 FOR UPDATE`),
  byJobId: s('by_job_id', `SELECT ${C} FROM items WHERE job_id = $1 ORDER BY id DESC LIMIT 1`),
  byPath: s(
    'by_path',
    `SELECT ${C} FROM items WHERE kind = 'file' AND (source_path = $1 OR claimed_path = $1) ORDER BY id DESC`,
  ),
  rowsOf: s('rows_of', `SELECT ${C} FROM items WHERE parent_id = $1 ORDER BY row_index`),
  recent: s(
    'recent',
    `SELECT ${C} FROM items WHERE kind = 'file' ORDER BY updated_at DESC, id DESC LIMIT $1`,
  ),
  // The unfinished states listed, so items_state serves it: not a scan of a year's finished items.
  unfinished: s('unfinished', `SELECT ${C} FROM items WHERE state IN (${UNFINISHED_STATES_SQL}) ORDER BY id`),
  hasRows: s('has_rows', 'SELECT EXISTS (SELECT 1 FROM items WHERE parent_id = $1) AS has'),
  childStates: s('child_states', 'SELECT state FROM items WHERE parent_id = $1 ORDER BY row_index'),
  childStatesOf: s(
    'child_states_of',
    'SELECT parent_id, state FROM items WHERE parent_id = ANY($1::bigint[]) ORDER BY parent_id, row_index',
  ),

  /**
   * A claimed file inserted in the state its claim leaves it in (claimed, rejected as a duplicate,
   * or on to creating with its first job name), with its history entries ($18 from states, $19 to
   * states, $20 details, all at $15) in the same statement under the history lock.
   */
  insertFile: s(
    'insert_file',
    `WITH ${HISTORY_BARRIER},
     inserted AS (INSERT INTO items (${FILE_COLUMNS}) VALUES (${FILE_VALUES}) RETURNING ${C}),
     ${FILE_HISTORY}
     SELECT * FROM inserted`,
  ),
  /**
   * A claim in one statement (after the claim lock, so a claim of the same content that committed
   * meanwhile is seen): what insertFile inserts ($1–$24, for a file with neither of the two below),
   * unless a row answers 'same', this very file already recorded and unfinished (another agent's,
   * when agents share the folder: $25), or 'earlier', the same content for the same folder or
   * workflow ($2) sent as the same managed company ($23; a claim or item without one is any
   * company's), not counting rejected drops (a fixed configuration may take the same file again),
   * unless duplicates are allowed ($10). Those rows are answered instead of 'inserted', and the
   * claim decides (a duplicate is inserted by insertFile). $26: the path of an inspection that
   * ended with this claim (null for none), its record cleared here.
   */
  claimFile: s(
    'claim_file',
    `WITH ended AS (DELETE FROM inspections WHERE path = $26::text),
     found AS (
       (SELECT 'same' AS found, ${C} FROM items
         WHERE kind = 'file' AND folder = $1 AND sha256 = $9
           AND ((source_path = $5 AND state = 'claimed') OR ($25::boolean AND claimed_path = $6 AND ${OPEN}))
         ORDER BY id LIMIT 1)
       UNION ALL
       (SELECT 'earlier' AS found, ${C} FROM items
         WHERE NOT $10 AND kind = 'file' AND sha256 = $9 AND (folder = $1 OR workflow_id = $2)
           AND ($23::text IS NULL OR managed_company_id IS NULL OR managed_company_id = $23)
           AND state <> 'rejected'
         ORDER BY id LIMIT 1)),
     ${HISTORY_BARRIER},
     inserted AS (
       INSERT INTO items (${FILE_COLUMNS}) SELECT ${FILE_VALUES} WHERE NOT EXISTS (SELECT 1 FROM found)
       RETURNING ${C}),
     ${FILE_HISTORY}
     SELECT 'inserted' AS found, * FROM inserted UNION ALL SELECT * FROM found`,
  ),
  /** This transaction's statements may take $1 ms (a file of many rows; reset at its end). */
  allowLonger: s('allow_longer', "SELECT set_config('statement_timeout', $1, true)"),
  /** Every row of a file in one statement, whatever their number; their ids follow the input order. */
  insertRows: s(
    'insert_rows',
    `INSERT INTO items (parent_id, kind, row_index, folder, workflow_id, managed_company_id, mode, file_name, sha256,
       allow_duplicates, state, label, payload_sha256, reject_code, reject_reason, created_at, updated_at)
     SELECT p.id, 'row', r.row_index, p.folder, p.workflow_id, p.managed_company_id, p.mode, p.file_name, p.sha256,
       p.allow_duplicates, r.state, r.label, r.payload_sha256, r.reject_code, r.reject_reason, $2, $2
     FROM items p,
       unnest($3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         WITH ORDINALITY AS r (row_index, state, label, payload_sha256, reject_code, reject_reason, n)
     WHERE p.id = $1
     ORDER BY r.n
     RETURNING ${C}`,
  ),

  // One move's update ($1 the item; the counters last), answering the item as recorded.
  setState: s(
    'set_state',
    `UPDATE items SET state = $2, upload_url = NULL, updated_at = $3, ${counters(4)} WHERE id = $1 RETURNING ${C}`,
  ),
  setCreating: s(
    'set_creating',
    `UPDATE items SET state = 'creating', attempt = $2, job_name = $3, job_id = NULL, upload_url = NULL,
       upload_deadline = NULL, updated_at = $4, ${counters(5)} WHERE id = $1 RETURNING ${C}`,
  ),
  setCreated: s(
    'set_created',
    `UPDATE items SET state = 'created', job_id = $2, upload_url = $3, upload_deadline = $4, updated_at = $5,
       ${counters(6)} WHERE id = $1 RETURNING ${C}`,
  ),
  setUploaded: s(
    'set_uploaded',
    `UPDATE items SET state = 'uploaded', uploaded_md5 = $2, upload_url = NULL, updated_at = $3, ${counters(4)}
     WHERE id = $1 RETURNING ${C}`,
  ),
  setRejected: s(
    'set_rejected',
    `UPDATE items SET state = 'rejected', reject_code = $2, reject_reason = $3, upload_url = NULL,
       updated_at = $4, ${counters(5)} WHERE id = $1 RETURNING ${C}`,
  ),

  forgetUrl: s(
    'forget_url',
    'UPDATE items SET upload_url = NULL, updated_at = $2 WHERE id = $1 AND upload_url IS NOT NULL',
  ),
  uploadUrl: s('upload_url', 'SELECT upload_url FROM items WHERE id = $1'),
  // A file's retry state, fenced ($e: the epoch this agent holds the file by; NULL: not fenced).
  recordFailedTry: s(
    'record_failed_try',
    `UPDATE items SET failed_tries = failed_tries + $5::int, next_try_at = $2, last_failure_code = $3
     WHERE id = $1 AND ($4::int IS NULL OR epoch = $4) RETURNING ${C}`,
  ),
  clearFailedTries: s(
    'clear_failed_tries',
    `UPDATE items SET failed_tries = 0, next_try_at = NULL
     WHERE id = $1 AND ($2::int IS NULL OR epoch = $2) RETURNING id`,
  ),

  // Leases: $1 this agent's id, $2 the lease (ms).
  /** Every unfinished file this agent holds, its lease extended; the ones missing are lost. */
  // Rows locked in id order: two renewals at once (or a renewal and any statement locking files in
  // that order) wait for each other instead of each holding a row the other needs (a deadlock).
  renewLeases: s(
    'renew_leases',
    `UPDATE items SET lease_until = ${fromNow('$2')}
     WHERE id IN (SELECT id FROM items WHERE owner = $1 AND kind = 'file' AND ${OPEN} ORDER BY id FOR UPDATE)
     RETURNING id, epoch`,
  ),
  /**
   * Unfinished files this agent may take, taken with the next epoch. Of the folders $5 (the ones it
   * runs): files nobody holds, and files a previous start of this agent held (an agent row of the
   * same place, $3, that is not this one: the state folder's lock makes it dead). Of the folders $6
   * (those whose files every agent can reach): also files whose lease ran out. SKIP LOCKED: files
   * another agent is taking (or moving) now are left to it. $4: at most this many.
   */
  takeOver: s(
    'take_over',
    `WITH takeable AS (
       SELECT id, owner AS previous_owner FROM items
       WHERE kind = 'file' AND ${OPEN} AND owner IS DISTINCT FROM $1 AND folder = ANY($5::text[])
         AND (owner IS NULL OR owner IN (SELECT id FROM agents WHERE place = $3 AND id <> $1)
           OR (folder = ANY($6::text[]) AND (lease_until IS NULL OR lease_until < now())))
       ORDER BY id LIMIT $4
       FOR UPDATE SKIP LOCKED)
     UPDATE items i SET owner = $1, epoch = i.epoch + 1, lease_until = ${fromNow('$2')}
     FROM takeable t WHERE i.id = t.id
     RETURNING i.id, i.epoch, t.previous_owner`,
  ),
  /**
   * The newest item of this very drop of a remote file: folder $1, source URL $2, content $3, size
   * $4, mtime in the second starting at $5 (SFTP v3 has no finer times).
   */
  sameDrop: s(
    'same_drop',
    `SELECT ${C} FROM items
     WHERE kind = 'file' AND folder = $1 AND source_path = $2 AND sha256 = $3 AND size = $4
       AND mtime_ms >= $5 AND mtime_ms < $5 + 1000
     ORDER BY id DESC LIMIT 1`,
  ),
  /**
   * File $3 taken over with the copy at $5, when no live agent holds it (as in takeOver: nobody, a
   * lease run out, a previous start of this agent, $4 its place).
   */
  takeOverCopy: s(
    'take_over_copy',
    `WITH takeable AS (
       SELECT id, owner AS previous_owner FROM items
       WHERE id = $3 AND kind = 'file' AND ${OPEN} AND owner IS DISTINCT FROM $1
         AND (owner IS NULL OR lease_until IS NULL OR lease_until < now()
           OR owner IN (SELECT id FROM agents WHERE place = $4 AND id <> $1))
       FOR UPDATE SKIP LOCKED)
     UPDATE items i SET owner = $1, epoch = i.epoch + 1, lease_until = ${fromNow('$2')}, claimed_path = $5
     FROM takeable t WHERE i.id = t.id
     RETURNING i.id, i.epoch, t.previous_owner`,
  ),
  /** File $3's lease extended while this agent holds it by epoch $4. */
  renewForSend: s(
    'renew_for_send',
    `UPDATE items SET lease_until = ${fromNow('$2')} WHERE id = $3 AND owner = $1 AND epoch = $4 RETURNING id`,
  ),
  // Held by the transaction around one placement of a file's copy (placeAlone). The transaction waits
  // on file moves, which a frozen agent may stretch past the pool's idle-in-transaction limit: lifted
  // for it alone (it holds no row lock; a dead agent's connection ends with it).
  placementLock: s(
    'placement_lock',
    `SELECT set_config('idle_in_transaction_session_timeout', '0', true) AS unbounded,
       pg_try_advisory_xact_lock($1::int, $2::int) AS got`,
  ),
  /** Whether agent $1 still holds file $2 by epoch $3 (no row lock: the placement lock excludes). */
  stillHeld: s('still_held', 'SELECT id FROM items WHERE id = $2 AND owner = $1 AND epoch = $3'),
  /**
   * Whether file $2 is final and was an earlier start's of agent $1 (an agent row of the same
   * place, $3): no start takes a final file over, yet its copy in this place's spool is this
   * agent's to place (the state folder's lock makes that start dead).
   */
  finalOfEarlierStart: s(
    'final_of_earlier_start',
    `SELECT id FROM items WHERE id = $2 AND state IN ('done', 'rejected')
       AND owner IN (SELECT id FROM agents WHERE place = $3 AND id <> $1)`,
  ),
  /** Who holds the file of item $1 now (a lost lease's message). */
  holderOf: s(
    'holder_of',
    `SELECT id, owner, epoch, folder, file_name FROM items
     WHERE id = coalesce((SELECT parent_id FROM items WHERE id = $1), $1)`,
  ),
  /** A stopping agent's files: their leases end now, so another agent takes them at once. */
  releaseLeases: s(
    'release_leases',
    `UPDATE items SET lease_until = now() WHERE id IN (SELECT id FROM items
       WHERE owner = $1 AND kind = 'file' AND ${OPEN} AND lease_until > now() ORDER BY id FOR UPDATE)`,
  ),
  /** Files $1 and their unfinished rows, for the plan of what to do with them. */
  unfinishedOf: s(
    'unfinished_of',
    `SELECT ${C} FROM items WHERE (id = ANY($1::bigint[]) OR parent_id = ANY($1::bigint[])) AND ${OPEN} ORDER BY id`,
  ),

  /**
   * A transaction's history entries, in their order, as its last statement before COMMIT. The ids
   * are taken under the history lock held shared until the commit (see PostgresJournalReader's
   * horizon: a reader never passes an id whose transaction may still commit).
   */
  insertHistory: s(
    'insert_history',
    `WITH barrier AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(${LOCK_SPACE.history}, 1))
     INSERT INTO history (item_id, from_state, to_state, at, detail)
     SELECT e.item_id, e.from_state, e.to_state, e.at, e.detail::json
     FROM barrier, unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[])
       WITH ORDINALITY AS e (item_id, from_state, to_state, at, detail, n)
     ORDER BY e.n`,
  ),
  history: s(
    'history',
    'SELECT item_id, from_state, to_state, at, detail FROM history WHERE item_id = $1 ORDER BY id',
  ),
  counts: s('counts', 'SELECT kind, state, count(*) AS n FROM items GROUP BY kind, state'),

  // Pruning: finished files last moved before the cutoff, by id range, locked as a move locks them.
  pruneCandidates: s(
    'prune_candidates',
    // A done file pruned before (its row alone is left) is passed over, as on SQLite (statements.ts).
    `SELECT id FROM items
     WHERE id > $1 AND id <= $2 AND kind = 'file' AND state IN ('done', 'rejected') AND updated_at < $3
       AND (state = 'rejected' OR EXISTS (SELECT 1 FROM history h WHERE h.item_id = items.id))
     ORDER BY id FOR UPDATE`,
  ),
  pruneRowsHistory: s(
    'prune_rows_history',
    `WITH gone AS (
       DELETE FROM history h USING items r WHERE r.parent_id = ANY($1::bigint[]) AND h.item_id = r.id
       RETURNING r.parent_id AS id)
     SELECT id, count(*) AS n FROM gone GROUP BY id`,
  ),
  pruneHistory: s(
    'prune_history',
    `WITH gone AS (DELETE FROM history WHERE item_id = ANY($1::bigint[]) RETURNING item_id AS id)
     SELECT id, count(*) AS n FROM gone GROUP BY id`,
  ),
  pruneRows: s(
    'prune_rows',
    `WITH gone AS (DELETE FROM items WHERE parent_id = ANY($1::bigint[]) RETURNING parent_id AS id)
     SELECT id, count(*) AS n FROM gone GROUP BY id`,
  ),
  pruneItems: s(
    'prune_items',
    "DELETE FROM items WHERE id = ANY($1::bigint[]) AND state = 'rejected' RETURNING id",
  ),
  maxId: s('max_id', 'SELECT max(id) AS id FROM items'),

  // Inspection records need to outlive the agent's crash, not the server's (as on SQLite, where
  // they are not synced either): committed without waiting for the WAL flush.
  inspectionStarting: s(
    'inspection_starting',
    `WITH ${UNSYNCED} INSERT INTO inspections (path, started_at) SELECT $1, $2 FROM unsynced
     ON CONFLICT (path) DO UPDATE SET interrupted = inspections.interrupted + 1, started_at = excluded.started_at`,
  ),
  inspectionEnded: s(
    'inspection_ended',
    `WITH ${UNSYNCED} DELETE FROM inspections WHERE path = $1 AND EXISTS (SELECT 1 FROM unsynced)`,
  ),
  interruptedInspections: s(
    'interrupted_inspections',
    'SELECT interrupted + 1 AS n FROM inspections WHERE path = $1 AND started_at < $2',
  ),
} as const;

const oneStatement = new Map<string, Statement>();

/**
 * A file's move as one autocommitted statement: `move` (one of the set* updates above, `WHERE id =
 * $1`, its values $1..$k-1) applied only while the file is as this journal last saw it (state $k,
 * attempt $k+1, job id $k+2, no payload rows) and held by this agent ($k+3 its id, $k+4 the epoch;
 * a NULL id: not fenced), its history entry ($k+5 at, $k+6 detail) inserted in the same statement
 * under the history lock. One round trip instead of a transaction's seven; no row answered: the
 * file is not as seen (or not held), and the move takes the transaction's way, which says why.
 */
export function oneStatementMove(move: Statement, k: number, unsynced = false): Statement {
  const name = move.name ?? '';
  const key = unsynced ? `${name}/unsynced` : name;
  const known = oneStatement.get(key);
  if (known) return known;
  const at = (i: number) => `$${k + i}`;
  const where = 'WHERE id = $1 RETURNING';
  if (!name || !move.text.includes(where)) throw new Error(`${name} is not a move of one item`);
  const update = move.text.replace(
    where,
    `WHERE id = $1 AND state = ${at(0)} AND attempt = ${at(1)} AND job_id IS NOT DISTINCT FROM ${at(2)}::text
       AND (${at(3)}::text IS NULL OR (owner = ${at(3)} AND epoch = ${at(4)}::int))
       AND NOT EXISTS (SELECT 1 FROM items c WHERE c.parent_id = $1)
     RETURNING`,
  );
  // Unsynced: the commit answers before the server's disk has it (set with the history lock, which
  // the statement takes once it moved the row).
  const barrier = unsynced
    ? `barrier AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(${LOCK_SPACE.history}, 1),
         set_config('synchronous_commit', 'off', true))`
    : HISTORY_BARRIER;
  const statement = s(
    `${name.replace(/^docex_journal_/, '')}_in_one${unsynced ? '_unsynced' : ''}`,
    `WITH ${barrier},
     moved AS (${update}),
     logged AS (
       INSERT INTO history (item_id, from_state, to_state, at, detail)
       SELECT moved.id, ${at(0)}, moved.state, ${at(5)}::bigint, ${at(6)}::json FROM moved, barrier)
     SELECT * FROM moved`,
  );
  oneStatement.set(key, statement);
  return statement;
}

/**
 * BEGIN and the claim lock (claims of one content one at a time, across agents; held until the
 * claim commits) in one round trip: the simple query protocol takes no parameters, so the content
 * hash is written into the text, which nothing but a hex string may be.
 */
export function beginWithClaimLock(sha256: string): BeginStatement {
  if (!/^[0-9a-f]{1,128}$/i.test(sha256)) throw new Error('a content hash is a hex string');
  return `BEGIN; SELECT pg_advisory_xact_lock(${LOCK_SPACE.claim}, hashtext('${sha256}'))`;
}
