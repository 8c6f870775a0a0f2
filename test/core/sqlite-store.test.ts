import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import type { Database } from '../../src/core/sqlite.js';
import {
  latestVersion,
  type MigrateOptions,
  type Migration,
  migrate,
  openDatabase,
} from '../../src/core/sqlite-store.js';

const V1: Migration = { version: 1, sql: 'CREATE TABLE a (id INTEGER PRIMARY KEY)' };
const V2: Migration = { version: 2, sql: 'CREATE TABLE b (a_id INTEGER REFERENCES a (id))' };
// Any store's code: the store passes its own (DOCEX_JOURNAL_VERSION here).
const OPTS: MigrateOptions = { now: 1_000, newerCode: 'DOCEX_JOURNAL_VERSION', what: 'test.sqlite' };

describe('sqlite-store', () => {
  const dirs: string[] = [];
  const dbs: Database[] = [];
  afterEach(() => {
    for (const db of dbs.splice(0)) if (db.open) db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const open = (file: string, options: Parameters<typeof openDatabase>[1]) => {
    const db = openDatabase(file, options);
    dbs.push(db);
    return db;
  };
  const tempFile = () => {
    const dir = mkdtempSync(join(tmpdir(), 'docex-store-'));
    dirs.push(dir);
    return join(dir, 'nested', 'test.sqlite');
  };

  it('creates the file and its folder private to the agent, in WAL mode', () => {
    const file = tempFile();
    const db = open(file, { synchronous: 'NORMAL' });
    db.exec('CREATE TABLE t (x)');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('applies the pragmas each store asks for', () => {
    const full = open(tempFile(), { synchronous: 'FULL', secureDelete: true });
    expect(full.pragma('synchronous', { simple: true })).toBe(2);
    expect(full.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(full.pragma('secure_delete', { simple: true })).toBe(1);
    expect(full.pragma('busy_timeout', { simple: true })).toBe(5000);
    const normal = open(tempFile(), { synchronous: 'NORMAL' });
    expect(normal.pragma('synchronous', { simple: true })).toBe(1);
    expect(normal.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(normal.pragma('secure_delete', { simple: true })).toBe(0);
  });

  it('runs each migration once, in order, and records it in schema_migrations', () => {
    const file = tempFile();
    const db = open(file, { synchronous: 'NORMAL' });
    expect(migrate(db, [V1], OPTS)).toEqual([1]);
    expect(migrate(db, [V1, V2], { ...OPTS, now: 2_000 })).toEqual([2]);
    expect(migrate(db, [V1, V2], OPTS)).toEqual([]);
    expect(db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all()).toEqual([
      { version: 1, applied_at: 1_000 },
      { version: 2, applied_at: 2_000 },
    ]);
    expect(latestVersion([V1, V2])).toBe(2);
  });

  it("refuses a file written by a newer agent with the store's own code and leaves it untouched", () => {
    const file = tempFile();
    const db = open(file, { synchronous: 'NORMAL' });
    migrate(db, [V1, V2], OPTS);
    let caught: unknown;
    try {
      migrate(db, [V1], OPTS);
    } catch (err) {
      caught = err;
    }
    expect(isDocexError(caught, 'DOCEX_JOURNAL_VERSION')).toBe(true);
    expect((caught as Error).message).toBe(
      'test.sqlite has schema version 2; this agent knows up to 1: upgrade the agent',
    );
    expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: 2 });
  });

  it('rolls back every migration of a run when one fails', () => {
    const db = open(tempFile(), { synchronous: 'NORMAL' });
    const broken: Migration = { version: 2, sql: 'CREATE TABLE a (id INTEGER)' };
    expect(() => migrate(db, [V1, broken], OPTS)).toThrow();
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name IN ('a', 'b')").all()).toEqual([]);
    expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: 0 });
  });
});
