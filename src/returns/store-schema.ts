/**
 * The schema of `<stateDir>/returns.sqlite`, versioned like the journal's: each migration runs
 * once, in order, in one transaction. Times are epoch milliseconds from the injected clock.
 */
import type { Database } from '../core/sqlite.js';
import { latestVersion, type Migration, migrate } from '../core/sqlite-store.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE sources (
        item_id INTEGER PRIMARY KEY,
        folder TEXT NOT NULL,
        file_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        claimed_at INTEGER NOT NULL,
        day TEXT NOT NULL,
        status_path TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL DEFAULT 1,
        written_version INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE jobs (
        job_id TEXT PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources (item_id),
        item_id INTEGER NOT NULL,
        row_index INTEGER,
        label TEXT,
        job_name TEXT,
        recorded_at INTEGER NOT NULL,
        status TEXT,
        job_json TEXT,
        next_poll_at INTEGER NOT NULL,
        unchanged_polls INTEGER NOT NULL DEFAULT 0,
        polls INTEGER NOT NULL DEFAULT 0,
        done INTEGER NOT NULL DEFAULT 0,
        gave_up TEXT,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX jobs_due ON jobs (done, next_poll_at);
      CREATE INDEX jobs_source ON jobs (source_id);
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES jobs (job_id),
        business_status TEXT NOT NULL,
        status TEXT NOT NULL,
        final_at INTEGER,
        final_day TEXT,
        event_json TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX events_job ON events (job_id);
      CREATE INDEX events_day ON events (final_day);
      CREATE TABLE documents (
        sending_event_id TEXT NOT NULL,
        file_reference TEXT NOT NULL,
        job_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT,
        content_type TEXT,
        size INTEGER,
        path TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'writing', 'done')),
        failures INTEGER NOT NULL DEFAULT 0,
        next_try_at INTEGER NOT NULL,
        last_error TEXT,
        md5 TEXT,
        done_at INTEGER,
        PRIMARY KEY (sending_event_id, file_reference)
      );
      CREATE INDEX documents_due ON documents (state, next_try_at);
      CREATE INDEX documents_path ON documents (path);
      CREATE TABLE csv_days (day TEXT PRIMARY KEY, rows INTEGER NOT NULL, written_at INTEGER NOT NULL);
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    `,
  },
  {
    // A download that keeps failing is parked (retry policy) until an operator asks for it again.
    version: 2,
    sql: `
      CREATE TABLE documents_v2 (
        sending_event_id TEXT NOT NULL,
        file_reference TEXT NOT NULL,
        job_id TEXT NOT NULL,
        type TEXT NOT NULL,
        name TEXT,
        content_type TEXT,
        size INTEGER,
        path TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'writing', 'done', 'parked')),
        failures INTEGER NOT NULL DEFAULT 0,
        next_try_at INTEGER NOT NULL,
        last_error TEXT,
        md5 TEXT,
        done_at INTEGER,
        PRIMARY KEY (sending_event_id, file_reference)
      );
      INSERT INTO documents_v2 SELECT * FROM documents;
      DROP TABLE documents;
      ALTER TABLE documents_v2 RENAME TO documents;
      CREATE INDEX documents_due ON documents (state, next_try_at);
      CREATE INDEX documents_path ON documents (path);
    `,
  },
  {
    // The sources whose status file is older than their state, found without reading every source:
    // a year of followed files is a million rows, and the status pass looks for stale ones each loop.
    version: 3,
    sql: `
      CREATE INDEX sources_stale ON sources (item_id) WHERE written_version < version;
    `,
  },
];

export const RETURNS_SCHEMA_VERSION = latestVersion(MIGRATIONS);

export function migrateReturns(db: Database, now: number): number[] {
  return migrate(db, MIGRATIONS, { now, newerCode: 'DOCEX_RETURNS_STORE_VERSION', what: 'returns.sqlite' });
}
