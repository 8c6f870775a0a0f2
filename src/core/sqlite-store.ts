/**
 * What the agent's SQLite files (intake journal, returns.sqlite, inbox.sqlite) share: opening a
 * file private to the agent in WAL mode, and versioned migrations. Each store keeps its own
 * migration list, pragmas and `DOCEX_*_VERSION` code.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ErrorCode } from './error-codes.js';
import { DocexError } from './errors.js';
import { Database } from './sqlite.js';

export interface StoreOpenOptions {
  /** FULL for moves the agent acts on next; NORMAL where a power cut only repeats work. */
  synchronous: 'FULL' | 'NORMAL';
  /** Zero freed bytes, so a dropped secret does not linger in free page space. */
  secureDelete?: boolean;
  /**
   * SQLite's page cache of this connection, in KiB (absent: better-sqlite3's build default, larger
   * than SQLite's own). A store that grows with the night (returns, inbox) fills it as it grows,
   * and the agent's resident set with it: those take SQLite's own default, their queries reading by
   * index.
   */
  cacheKiB?: number;
}

/** The page cache of a store that grows with the night (StoreOpenOptions.cacheKiB): SQLite's default. */
export const NIGHTLY_STORE_CACHE_KIB = 2000;

/** The file is made 0600 before SQLite opens it; SQLite gives its -wal and -shm files the same mode. */

export function openDatabase(file: string, options: StoreOpenOptions): Database {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous}`);
    // better-sqlite3 builds SQLite with foreign keys on already; said here so no store depends on that.
    db.pragma('foreign_keys = ON');
    if (options.secureDelete) db.pragma('secure_delete = ON');
    if (options.cacheKiB !== undefined) db.pragma(`cache_size = -${options.cacheKiB}`);
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** A row as better-sqlite3 answers it. */
export type SqlRow = Record<string, string | number | null>;

/** A nullable column as an optional field. */
export const opt = <T>(v: string | number | null | undefined): T | undefined =>
  v === null || v === undefined ? undefined : (v as T);

export interface Migration {
  version: number;
  sql: string;
}

/** The version a migration list brings a database to. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations[migrations.length - 1]!.version;
}

export interface MigrateOptions {
  /** Recorded as applied_at (epoch ms from the injected clock). */
  now: number;
  /** The store's own code for a file written by a newer agent, e.g. DOCEX_JOURNAL_VERSION. */
  newerCode: ErrorCode;
  /** How the message names the file: "the journal", "returns.sqlite". */
  what: string;
}

/**
 * Brings the database to the last migration's version: each migration runs once, in order, all
 * in one transaction, recorded in schema_migrations. A file written by a newer agent is refused,
 * not guessed at. Answers the versions it applied.
 */
export function migrate(db: Database, migrations: readonly Migration[], options: MigrateOptions): number[] {
  const known = latestVersion(migrations);
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const current =
    (db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
  if (current > known) {
    throw new DocexError(
      options.newerCode,
      `${options.what} has schema version ${current}; this agent knows up to ${known}: upgrade the agent`,
      { details: { current, known } },
    );
  }
  const applied: number[] = [];
  const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
  db.transaction(() => {
    for (const m of migrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, options.now);
      applied.push(m.version);
    }
  })();
  return applied;
}
