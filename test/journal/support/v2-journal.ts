/**
 * A journal file as an agent of schema version 2 left it (before the retry-state columns of
 * version 3), for the migration test. The two migrations are frozen copies of what those agents
 * ran, not read from src/journal/schema.ts: a later edit there must not change what "version 2"
 * means here.
 */
import type { Database } from '../../../src/core/sqlite.js';
import { type Migration, migrate, openDatabase } from '../../../src/core/sqlite-store.js';

const V2_MIGRATIONS: readonly Migration[] = [
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
    version: 2,
    sql: `
      CREATE TABLE inspections (
        path TEXT PRIMARY KEY,
        started_at INTEGER NOT NULL,
        interrupted INTEGER NOT NULL DEFAULT 0
      );
    `,
  },
];

/** Makes `file` a version-2 journal (the way openDatabase + migrate made it), empty; open for writing. */
export function createV2Journal(file: string, now: number): Database {
  const db = openDatabase(file, { synchronous: 'FULL', secureDelete: true });
  migrate(db, V2_MIGRATIONS, { now, newerCode: 'DOCEX_JOURNAL_VERSION', what: 'the journal' });
  return db;
}

export interface V2Item {
  kind?: 'file' | 'row';
  parentId?: number;
  rowIndex?: number;
  folder?: string;
  workflowId?: string;
  mode?: string;
  fileName: string;
  sourcePath?: string;
  claimedPath?: string;
  sha256: string;
  state: string;
  attempt?: number;
  jobName?: string;
  jobId?: string;
  uploadUrl?: string;
  uploadDeadline?: number;
  at: number;
}

/** Inserts an item row as a version-2 agent wrote it; answers its id. */
export function insertV2Item(db: Database, item: V2Item): number {
  const result = db
    .prepare(
      `INSERT INTO items (parent_id, kind, row_index, folder, workflow_id, mode, file_name, source_path,
         claimed_path, size, mtime_ms, sha256, state, attempt, job_name, job_id, upload_url, upload_deadline,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1234, 1763700000000, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      item.parentId ?? null,
      item.kind ?? 'file',
      item.rowIndex ?? null,
      item.folder ?? 'invoices',
      item.workflowId ?? 'wf-pdf-email',
      item.mode ?? 'single-file',
      item.fileName,
      item.sourcePath ?? null,
      item.claimedPath ?? null,
      item.sha256,
      item.state,
      item.attempt ?? 0,
      item.jobName ?? null,
      item.jobId ?? null,
      item.uploadUrl ?? null,
      item.uploadDeadline ?? null,
      item.at,
      item.at,
    );
  return Number(result.lastInsertRowid);
}

/** Appends a history entry as a version-2 agent wrote it (detail as JSON, keys in its order). */
export function insertV2History(
  db: Database,
  itemId: number,
  from: string | null,
  to: string,
  at: number,
  detail?: Record<string, unknown>,
): void {
  db.prepare('INSERT INTO history (item_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)').run(
    itemId,
    from,
    to,
    at,
    detail === undefined ? null : JSON.stringify(detail),
  );
}
