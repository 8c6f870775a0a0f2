/**
 * The return path's tables in the journal's PostgreSQL database: the returns store's (SQLite's
 * returns.sqlite, migrations 1..3) and the inbox store's (inbox.sqlite, migration 1), in
 * PostgreSQL's DDL, with the same columns and meanings. Their names carry a `returns_` or `inbox_`
 * prefix (the journal's own tables, and each other's `meta`, share the schema). Each store keeps
 * its own migration record (returns_schema_migrations, inbox_schema_migrations: the journal's
 * schema_migrations stays the journal's), migrated in one transaction under an advisory lock of
 * its own, so two agents starting at once migrate once; a database written by a newer agent is
 * refused with the SQLite store's code (DOCEX_RETURNS_STORE_VERSION, DOCEX_INBOX_VERSION).
 *
 * Times are BIGINT epoch ms from the injected clock (parsed as numbers by the pool's own types);
 * texts that are ordered or paged by (ids, days, types) are COLLATE "C": byte order, as SQLite's
 * BINARY, whatever the database's collation. Booleans are BOOLEAN, read back as 0/1 for
 * store-rows.ts's mappers. JSON is TEXT, kept byte for byte (a poll compares it).
 */
import type { ErrorCode } from '../../core/error-codes.js';
import { DocexError } from '../../core/errors.js';
import type { Migration } from '../../core/sqlite-store.js';
import type { PgSession, Tx } from '../../journal/postgres/pool.js';

/**
 * The journal's schema lock space (0x64637831, the journal's migrations take its key 1): the
 * returns store migrates under key 2, the inbox store under key 3.
 */
const SCHEMA_LOCK_SPACE = 0x64637831;

export interface Component {
  /** How messages name it. */
  what: string;
  /** Its migration record's table. */
  versions: string;
  /** Its second advisory lock key in SCHEMA_LOCK_SPACE. */
  lockKey: number;
  newerCode: ErrorCode;
  migrations: readonly Migration[];
}

const C = 'COLLATE "C"';

export const RETURNS_COMPONENT: Component = {
  what: 'the returns store',
  versions: 'returns_schema_migrations',
  lockKey: 2,
  newerCode: 'DOCEX_RETURNS_STORE_VERSION',
  migrations: [
    {
      version: 1,
      sql: `
        CREATE TABLE returns_sources (
          item_id BIGINT PRIMARY KEY,
          folder TEXT NOT NULL,
          file_name TEXT NOT NULL,
          sha256 TEXT NOT NULL,
          claimed_at BIGINT NOT NULL,
          day TEXT ${C} NOT NULL,
          status_path TEXT ${C} NOT NULL UNIQUE,
          version BIGINT NOT NULL DEFAULT 1,
          written_version BIGINT NOT NULL DEFAULT 0
        );
        CREATE TABLE returns_jobs (
          job_id TEXT ${C} PRIMARY KEY,
          source_id BIGINT NOT NULL REFERENCES returns_sources (item_id),
          item_id BIGINT NOT NULL,
          row_index INTEGER,
          label TEXT,
          job_name TEXT,
          recorded_at BIGINT NOT NULL,
          status TEXT,
          job_json TEXT,
          next_poll_at BIGINT NOT NULL,
          unchanged_polls INTEGER NOT NULL DEFAULT 0,
          polls INTEGER NOT NULL DEFAULT 0,
          done BOOLEAN NOT NULL DEFAULT false,
          gave_up TEXT,
          updated_at BIGINT NOT NULL
        );
        CREATE INDEX returns_jobs_due ON returns_jobs (done, next_poll_at);
        CREATE INDEX returns_jobs_source ON returns_jobs (source_id);
        CREATE TABLE returns_events (
          id TEXT ${C} PRIMARY KEY,
          job_id TEXT ${C} NOT NULL REFERENCES returns_jobs (job_id),
          business_status TEXT NOT NULL,
          status TEXT NOT NULL,
          final_at BIGINT,
          final_day TEXT ${C},
          event_json TEXT NOT NULL,
          updated_at BIGINT NOT NULL
        );
        CREATE INDEX returns_events_job ON returns_events (job_id, id);
        CREATE INDEX returns_events_day ON returns_events (final_day, final_at, id);
        CREATE TABLE returns_documents (
          sending_event_id TEXT ${C} NOT NULL,
          file_reference TEXT ${C} NOT NULL,
          job_id TEXT ${C} NOT NULL,
          type TEXT ${C} NOT NULL,
          name TEXT,
          content_type TEXT,
          size BIGINT,
          path TEXT ${C} NOT NULL,
          state TEXT NOT NULL CONSTRAINT returns_documents_state CHECK (state IN ('pending', 'writing', 'done')),
          failures INTEGER NOT NULL DEFAULT 0,
          next_try_at BIGINT NOT NULL,
          last_error TEXT,
          md5 TEXT,
          done_at BIGINT,
          PRIMARY KEY (sending_event_id, file_reference)
        );
        CREATE INDEX returns_documents_due ON returns_documents (state, next_try_at);
        CREATE INDEX returns_documents_path ON returns_documents (path);
        CREATE INDEX returns_documents_job ON returns_documents (job_id);
        CREATE TABLE returns_csv_days (
          day TEXT ${C} PRIMARY KEY,
          rows BIGINT NOT NULL,
          written_at BIGINT NOT NULL
        );
        CREATE TABLE returns_meta (key TEXT ${C} PRIMARY KEY, value TEXT NOT NULL);
      `,
    },
    {
      // A download that keeps failing is parked (retry policy) until an operator asks for it again.
      version: 2,
      sql: `
        ALTER TABLE returns_documents DROP CONSTRAINT returns_documents_state;
        ALTER TABLE returns_documents ADD CONSTRAINT returns_documents_state
          CHECK (state IN ('pending', 'writing', 'done', 'parked'));
      `,
    },
    {
      // The sources whose status file is older than their state, found without reading every source.
      version: 3,
      sql: `
        CREATE INDEX returns_sources_stale ON returns_sources (item_id) WHERE written_version < version;
      `,
    },
  ],
};

export const INBOX_COMPONENT: Component = {
  what: 'the inbox store',
  versions: 'inbox_schema_migrations',
  lockKey: 3,
  newerCode: 'DOCEX_INBOX_VERSION',
  migrations: [
    {
      version: 1,
      sql: `
        CREATE TABLE inbox_peppol_saved (
          id TEXT ${C} PRIMARY KEY,
          created_at BIGINT NOT NULL,
          saved_at BIGINT NOT NULL,
          file_stem TEXT NOT NULL
        );
        CREATE INDEX inbox_peppol_saved_created ON inbox_peppol_saved (created_at);
        CREATE TABLE inbox_meta (key TEXT ${C} PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE inbox_webhook_seen (
          id TEXT ${C} PRIMARY KEY,
          event_type TEXT,
          received_at BIGINT NOT NULL
        );
        CREATE INDEX inbox_webhook_seen_received ON inbox_webhook_seen (received_at);
      `,
    },
  ],
};

export function latestVersionOf(component: Component): number {
  return component.migrations[component.migrations.length - 1]!.version;
}

function newerRefused(component: Component, current: number): DocexError {
  const known = latestVersionOf(component);
  return new DocexError(
    component.newerCode,
    `${component.what} has schema version ${current}; this agent knows up to ${known}: upgrade the agent`,
    { details: { current, known } },
  );
}

async function currentVersion(tx: Tx, component: Component): Promise<number> {
  return Number(
    (await tx.one({ text: `SELECT coalesce(max(version), 0) AS v FROM ${component.versions}` }))?.['v'],
  );
}

/**
 * Brings the component's tables to its last migration in one transaction, under its advisory lock
 * (a second agent starting at once waits, then finds nothing to do). Answers the versions applied.
 */
export function migrateComponent(session: PgSession, component: Component, now: number): Promise<number[]> {
  return session.transaction(`migrate ${component.what}`, (tx) => migrateWithin(tx, component, now));
}

/**
 * migrateComponent's work inside a transaction the caller holds (`journal copy` creates every
 * store's tables in its one transaction): takes the component's advisory lock (held until that
 * transaction ends), creates its migration record when absent, applies what is missing.
 */
export async function migrateWithin(tx: Tx, component: Component, now: number): Promise<number[]> {
  await tx.one({ text: `SELECT pg_advisory_xact_lock(${SCHEMA_LOCK_SPACE}, ${component.lockKey})` });
  // Created only when absent: IF NOT EXISTS still needs CREATE on the schema.
  const exists = await tx.one({ text: `SELECT to_regclass('${component.versions}') IS NOT NULL AS ok` });
  if (exists?.['ok'] !== true) {
    await tx.one({
      text: `CREATE TABLE ${component.versions} (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)`,
    });
  }
  const current = await currentVersion(tx, component);
  if (current > latestVersionOf(component)) throw newerRefused(component, current);
  const applied: number[] = [];
  for (const m of component.migrations) {
    if (m.version <= current) continue;
    await tx.one({ text: m.sql });
    await tx.one({ text: `INSERT INTO ${component.versions} (version, applied_at) VALUES ($1, $2)` }, [
      m.version,
      now,
    ]);
    applied.push(m.version);
  }
  return applied;
}

/**
 * The component's version without writing (readers, and commands that never create a store):
 * undefined when it was never migrated here; a newer one is refused as migrate refuses it.
 */
export async function existingVersion(session: PgSession, component: Component): Promise<number | undefined> {
  const exists = await session.one(`check ${component.what}'s schema`, {
    text: `SELECT to_regclass('${component.versions}') IS NOT NULL AS ok`,
  });
  if (exists?.['ok'] !== true) return undefined;
  const row = await session.one(`check ${component.what}'s schema`, {
    text: `SELECT coalesce(max(version), 0) AS v FROM ${component.versions}`,
  });
  const current = Number(row?.['v'] ?? 0);
  if (current > latestVersionOf(component)) throw newerRefused(component, current);
  return current === 0 ? undefined : current;
}
