import type { ErrorCode } from '../core/error-codes.js';
import type { Database } from '../core/sqlite.js';
import {
  latestVersion,
  type Migration,
  migrate as migrateStore,
  opt,
  type SqlRow as Row,
} from '../core/sqlite-store.js';
import type { ItemKind, ItemMode, ItemState } from './states.js';

/**
 * The journal's schema, versioned: each migration runs once, in order, in one transaction, and is
 * recorded in schema_migrations. A journal written by a newer agent is refused, not guessed at.
 * Times are epoch milliseconds from the injected clock.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        parent_id INTEGER REFERENCES items (id),
        kind TEXT NOT NULL CHECK (kind IN ('file', 'row')),
        row_index INTEGER,
        folder TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        file_name TEXT NOT NULL,
        source_path TEXT,
        claimed_path TEXT,
        size INTEGER,
        mtime_ms INTEGER,
        sha256 TEXT NOT NULL,
        allow_duplicates INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 0,
        job_name TEXT,
        job_id TEXT,
        upload_url TEXT,
        upload_deadline INTEGER,
        uploaded_md5 TEXT,
        label TEXT,
        payload_sha256 TEXT,
        reject_code TEXT,
        reject_reason TEXT,
        duplicate_of INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (parent_id, row_index)
      );
      CREATE INDEX items_content ON items (sha256, kind);
      CREATE INDEX items_state ON items (state);
      CREATE INDEX items_job ON items (job_id);
      CREATE INDEX items_source ON items (source_path);
      CREATE INDEX items_claimed ON items (claimed_path);
      CREATE INDEX items_parent ON items (parent_id);
      CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        item_id INTEGER NOT NULL REFERENCES items (id),
        from_state TEXT,
        to_state TEXT NOT NULL,
        at INTEGER NOT NULL,
        detail TEXT
      );
      CREATE INDEX history_item ON history (item_id, id);
    `,
  },
  {
    // A file whose inspection is under way: a row left behind is an inspection a crash interrupted.
    version: 2,
    sql: `
      CREATE TABLE inspections (
        path TEXT PRIMARY KEY,
        started_at INTEGER NOT NULL,
        interrupted INTEGER NOT NULL DEFAULT 0
      );
    `,
  },
  {
    // Retry state: what decides a file's next try survives a restart (and, on a shared journal,
    // reaches another agent). Counts of lost create answers move out of history notes.
    version: 3,
    sql: `
      ALTER TABLE items ADD COLUMN failed_tries INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE items ADD COLUMN next_try_at INTEGER;
      ALTER TABLE items ADD COLUMN last_failure_code TEXT;
      ALTER TABLE items ADD COLUMN lost_answers INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE items ADD COLUMN orphan_jobs INTEGER NOT NULL DEFAULT 0;
      -- Earlier agents wrote the counts only as history notes (the note is the detail's first key).
      UPDATE items SET
        orphan_jobs = (SELECT count(*) FROM history h WHERE h.item_id = items.id
          AND h.to_state = 'creating' AND h.detail GLOB '{"note":"orphan job*'),
        lost_answers = (SELECT count(*) FROM history h WHERE h.item_id = items.id
          AND ((h.to_state = 'creating' AND h.detail GLOB '{"note":"orphan job*')
            OR (h.to_state = 'created' AND h.detail GLOB '{"note":"job found by name"*')));
    `,
  },
  {
    // The managed company a file is sent as, decided with its workflow once at its claim (a
    // folder's routes): a restart sends it as recorded, whatever the configuration says since.
    // Empty: the folder's own (items of earlier agents, and folders without routes).
    version: 4,
    sql: `
      ALTER TABLE items ADD COLUMN managed_company_id TEXT;
    `,
  },
  {
    // A file's path relative to its drop folder (`acme/invoices/x.pdf`), recorded at its claim: its
    // archive, error, status and proof places keep the sub-path even after the folder's path
    // changes in the configuration. Empty (NULL) for items of earlier agents: read from source_path.
    version: 5,
    sql: `
      ALTER TABLE items ADD COLUMN relative_path TEXT;
    `,
  },
];

export const SCHEMA_VERSION = latestVersion(MIGRATIONS);

/** Brings the database to SCHEMA_VERSION; answers the versions it applied. */
export function migrate(db: Database, now: number): number[] {
  return migrateStore(db, MIGRATIONS, { now, newerCode: 'DOCEX_JOURNAL_VERSION', what: 'the journal' });
}

/** One journal item as callers see it. The upload URL is deliberately not a field. */
export interface JournalItem {
  id: number;
  parentId: number | undefined;
  kind: ItemKind;
  rowIndex: number | undefined;
  folder: string;
  workflowId: string;
  /**
   * The managed company the file is sent as, recorded at its claim (a route's, or the folder's);
   * undefined: the folder's own at the time of each call (items recorded before routes).
   */
  managedCompanyId: string | undefined;
  mode: ItemMode;
  fileName: string;
  sourcePath: string | undefined;
  /**
   * Its path relative to its drop folder (`acme/invoices/x.pdf`), recorded at its claim;
   * undefined for items recorded before the journal kept it (then read from sourcePath).
   */
  relativePath?: string | undefined;
  claimedPath: string | undefined;
  size: number | undefined;
  mtimeMs: number | undefined;
  sha256: string;
  allowDuplicates: boolean;
  state: ItemState;
  /** How many create intents were recorded (the job name's attempt). */
  attempt: number;
  jobName: string | undefined;
  jobId: string | undefined;
  uploadDeadline: number | undefined;
  /** Whether an upload URL is kept (only in state created). */
  hasUploadUrl: boolean;
  uploadedMd5: string | undefined;
  label: string | undefined;
  payloadSha256: string | undefined;
  /** Written only from a rejected move's `code` (an ErrorCode of the version that wrote it). */
  rejectCode: ErrorCode | undefined;
  rejectReason: string | undefined;
  duplicateOf: number | undefined;
  createdAt: number;
  updatedAt: number;
  /** Failed tries in a row (the retry policy's count); 0 after a try that succeeded or made progress. */
  failedTries: number;
  /** When the next try is due after a failed one (epoch ms); undefined when none waits. */
  nextTryAt: number | undefined;
  /** The code of the last failed try. */
  lastFailureCode: string | undefined;
  /** Creates whose answer was lost and whose job was then found by name. */
  lostAnswers: number;
  /** Of those, jobs that could not be used (no upload URL) and expire unused: each cost an attempt. */
  orphanJobs: number;
  /**
   * Several agents on one PostgreSQL journal: the agent holding the file (its id), the change of
   * owner it holds it by, and until when (epoch ms, the database's clock). Undefined and 0 on SQLite.
   */
  owner: string | undefined;
  epoch: number;
  leaseUntil: number | undefined;
}

/** The columns read for an item: `upload_url IS NOT NULL`, never the URL. */
export const ITEM_COLUMNS = `id, parent_id, kind, row_index, folder, workflow_id, mode, file_name, source_path,
  claimed_path, size, mtime_ms, sha256, allow_duplicates, state, attempt, job_name, job_id,
  upload_url IS NOT NULL AS has_upload_url, upload_deadline, uploaded_md5, label, payload_sha256,
  reject_code, reject_reason, duplicate_of, created_at, updated_at, failed_tries, next_try_at,
  last_failure_code, lost_answers, orphan_jobs, managed_company_id, relative_path`;

export function toItem(row: Row): JournalItem {
  return {
    id: row['id'] as number,
    parentId: opt(row['parent_id']),
    kind: row['kind'] as ItemKind,
    rowIndex: opt(row['row_index']),
    folder: row['folder'] as string,
    workflowId: row['workflow_id'] as string,
    managedCompanyId: opt(row['managed_company_id']),
    mode: row['mode'] as ItemMode,
    fileName: row['file_name'] as string,
    sourcePath: opt(row['source_path']),
    relativePath: opt(row['relative_path']),
    claimedPath: opt(row['claimed_path']),
    size: opt(row['size']),
    mtimeMs: opt(row['mtime_ms']),
    sha256: row['sha256'] as string,
    allowDuplicates: row['allow_duplicates'] === 1,
    state: row['state'] as ItemState,
    attempt: row['attempt'] as number,
    jobName: opt(row['job_name']),
    jobId: opt(row['job_id']),
    uploadDeadline: opt(row['upload_deadline']),
    hasUploadUrl: row['has_upload_url'] === 1,
    uploadedMd5: opt(row['uploaded_md5']),
    label: opt(row['label']),
    payloadSha256: opt(row['payload_sha256']),
    rejectCode: opt(row['reject_code']),
    rejectReason: opt(row['reject_reason']),
    duplicateOf: opt(row['duplicate_of']),
    createdAt: row['created_at'] as number,
    updatedAt: row['updated_at'] as number,
    failedTries: row['failed_tries'] as number,
    nextTryAt: opt(row['next_try_at']),
    lastFailureCode: opt(row['last_failure_code']),
    lostAnswers: row['lost_answers'] as number,
    orphanJobs: row['orphan_jobs'] as number,
    owner: opt(row['owner']),
    epoch: (row['epoch'] as number | undefined) ?? 0,
    leaseUntil: opt(row['lease_until']),
  };
}
