/**
 * `docex-agent journal copy`: a stopped agent's SQLite stores copied into an empty PostgreSQL
 * database, so the agent can move there and keep its duplicate detection, unfinished items,
 * history, inspections and retry state.
 *
 * - The agent must be stopped: the state folder's lock is taken for the whole copy (a running
 *   agent holds it, and is named).
 * - A source must be at its current SQLite schema version (an older one: start the agent once, it
 *   migrates). Nothing is written to it: it is opened read-only, in one read transaction.
 * - The target must hold no journal yet. Everything happens in ONE PostgreSQL transaction, under
 *   the schema's advisory lock (an agent starting on the target meanwhile waits): the schema is
 *   created by the PostgreSQL migrations, the rows go in batches (one INSERT … SELECT FROM unnest
 *   per batch and table), the identity sequences are moved past the highest id the SQLite file
 *   ever gave (AUTOINCREMENT: ids are never reused, pruned ones included), the counts are
 *   compared, then it commits. A failure anywhere rolls it all back: the target is left empty.
 * - Ids are kept. The history's ids are the cursors of the return path's feed (returns.sqlite
 *   keeps the last one it read) and of the ops totals, so they keep their meaning on PostgreSQL.
 * - The upload URL of a created job is copied (its upload must still be finished), never logged
 *   or shown: pg's errors leave through PgSession, which keeps neither their detail nor a URL's query.
 *
 * Each SQLite store of the state folder is one entry of STORES: its source file, its version, how
 * to tell the target already has it, its PostgreSQL schema and its tables. The journal is the
 * only one today; returns.sqlite and inbox.sqlite, once they have a PostgreSQL schema, are one
 * entry each.
 */
import { existsSync } from 'node:fs';
import { type Clock, systemClock } from '../../core/clock.js';
import { DocexError } from '../../core/errors.js';
import { REDACTED } from '../../core/log-redact.js';
import { Database } from '../../core/sqlite.js';
import type { PostgresConnection } from '../location.js';
import { acquireJournalLock } from '../lock.js';
import { SCHEMA_VERSION as SQLITE_JOURNAL_VERSION } from '../schema.js';
import { allowing, PgSession, type Statement, type Tx } from './pool.js';
import { MIGRATIONS as JOURNAL_MIGRATIONS, LOCK_SPACE } from './schema.js';

/** Rows per INSERT: large enough that a round trip is cheap beside it, small enough to stay in memory. */
export const DEFAULT_BATCH_ROWS = 5_000;

/** What a batch's INSERT may take beyond the connection's timeoutMs, per row (a generous bound). */
const MS_PER_ROW = 0.5;

/** A column: its name in both databases, its PostgreSQL array type, and how a SQLite value becomes one. */
interface Column {
  name: string;
  /** The type unnest() reads the batch's array as: `bigint`, `text`, `boolean`, … */
  type: string;
  /** The SELECT expression over the unnested value (a cast), when not the value itself. */
  expr?: string;
  /** SQLite value → the value sent (0/1 → boolean). */
  convert?: (value: unknown) => unknown;
}

/** One table copied as it is, in the order of its SQLite rowid (parents before their payload rows). */
interface TableCopy {
  table: string;
  columns: readonly Column[];
  /** The identity column whose sequence must pass the highest id (AUTOINCREMENT's, not max(id)). */
  identity?: string;
}

/** What a copied store reports: its counts, labelled for people. */
export interface CopyCount {
  label: string;
  n: number;
  /** What the count is made of (items: files and payload rows). */
  parts?: CopyCount[];
}

interface StoreCopy {
  /** The name the caller gives its file under (CopySources). */
  name: StoreName;
  /** How messages name the source: `journal.sqlite`. */
  what: string;
  /** The SQLite schema version the tables below describe: a source must be at it. */
  sqliteVersion: number;
  /** Why the target cannot take this store (it already has it), or undefined when it can. */
  occupied(tx: Tx): Promise<string | undefined>;
  /** Creates the store's tables on the target, at its current PostgreSQL version, inside `tx`. */
  createSchema(tx: Tx, now: number): Promise<void>;
  tables: readonly TableCopy[];
  /** The counts reported, from the source (in its read transaction). */
  counts(db: Database): CopyCount[];
  /** Values of the source no message may show (a failure's message may quote a row). */
  secrets(db: Database): string[];
}

const bigint = (name: string): Column => ({ name, type: 'bigint' });
const int = (name: string): Column => ({ name, type: 'integer' });
const text = (name: string): Column => ({ name, type: 'text' });
const toBoolean = (value: unknown) => (value === null || value === undefined ? null : value === 1);

const regclass = (tx: Tx, table: string) =>
  tx
    .one({ text: 'SELECT to_regclass($1) IS NOT NULL AS present' }, [table])
    .then((r) => r?.['present'] === true);

const JOURNAL: StoreCopy = {
  name: 'journal',
  what: 'journal.sqlite',
  sqliteVersion: SQLITE_JOURNAL_VERSION,
  async occupied(tx) {
    if (await regclass(tx, 'schema_migrations')) {
      const v = await tx.one({ text: 'SELECT count(*)::int AS n, max(version) AS v FROM schema_migrations' });
      if (Number(v?.['n'] ?? 0) > 0) return `it already has a journal (schema version ${String(v?.['v'])})`;
    }
    if (await regclass(tx, 'items')) {
      const any = await tx.one({ text: 'SELECT EXISTS (SELECT 1 FROM items) AS any' });
      if (any?.['any'] === true) return 'its items table already has rows';
    }
    return undefined;
  },
  async createSchema(tx, now) {
    // PostgresJournal's own migrations, in this transaction (migrate() would open one of its own).
    await tx.one({
      text: 'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    });
    for (const m of JOURNAL_MIGRATIONS) {
      await tx.one({ text: m.sql });
      await tx.one({ text: 'INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)' }, [
        m.version,
        now,
      ]);
    }
  },
  tables: [
    {
      table: 'items',
      identity: 'id',
      columns: [
        bigint('id'),
        bigint('parent_id'),
        text('kind'),
        int('row_index'),
        text('folder'),
        text('workflow_id'),
        text('mode'),
        text('file_name'),
        text('source_path'),
        text('claimed_path'),
        bigint('size'),
        { name: 'mtime_ms', type: 'double precision' },
        text('sha256'),
        { name: 'allow_duplicates', type: 'boolean', convert: toBoolean },
        text('state'),
        int('attempt'),
        text('job_name'),
        text('job_id'),
        // Needed to finish a created job's upload; travels in the batch's parameters, never in a message.
        text('upload_url'),
        bigint('upload_deadline'),
        text('uploaded_md5'),
        text('label'),
        text('payload_sha256'),
        text('reject_code'),
        text('reject_reason'),
        bigint('duplicate_of'),
        bigint('created_at'),
        bigint('updated_at'),
        int('failed_tries'),
        bigint('next_try_at'),
        text('last_failure_code'),
        int('lost_answers'),
        int('orphan_jobs'),
      ],
    },
    {
      table: 'history',
      identity: 'id',
      columns: [
        bigint('id'),
        bigint('item_id'),
        text('from_state'),
        text('to_state'),
        bigint('at'),
        // JSON text as SQLite keeps it; json (not jsonb) keeps it as written.
        { name: 'detail', type: 'text', expr: 'detail::json' },
      ],
    },
    { table: 'inspections', columns: [text('path'), bigint('started_at'), int('interrupted')] },
  ],
  counts(db) {
    const n = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    return [
      {
        label: 'items',
        n: n('SELECT count(*) AS n FROM items'),
        parts: [
          { label: 'files', n: n("SELECT count(*) AS n FROM items WHERE kind = 'file'") },
          { label: 'payload rows', n: n("SELECT count(*) AS n FROM items WHERE kind = 'row'") },
        ],
      },
      { label: 'history entries', n: n('SELECT count(*) AS n FROM history') },
      { label: 'inspections', n: n('SELECT count(*) AS n FROM inspections') },
    ];
  },
  secrets(db) {
    const rows = db.prepare('SELECT upload_url AS url FROM items WHERE upload_url IS NOT NULL').all() as {
      url: string;
    }[];
    return rows.map((r) => r.url);
  },
};

/** Every store copied, in this order. */
const STORES = [JOURNAL] as const;

export type StoreName = 'journal';

/** Where each store's SQLite file is (the state folder's journal.sqlite, …). */
export type CopySources = Record<StoreName, string>;

export interface CopyProgress {
  store: StoreName;
  table: string;
  /** Rows of this table copied so far, and in all. */
  copied: number;
  total: number;
}

export interface CopyOptions {
  /** The state folder: its lock is held for the whole copy. */
  stateDir: string;
  sources: CopySources;
  /** The target; its password beside the URL, never in it. */
  connection: PostgresConnection;
  /** applied_at of the migrations recorded on the target (default: the system clock). */
  clock?: Clock;
  /** Rows per INSERT (default DEFAULT_BATCH_ROWS). */
  batchRows?: number;
  onProgress?: (progress: CopyProgress) => void;
}

export interface CopiedStore {
  name: StoreName;
  file: string;
  schemaVersion: number;
  /** Rows per table. */
  tables: { table: string; rows: number }[];
  counts: CopyCount[];
}

export interface CopyResult {
  /** The target, without its password. */
  location: string;
  stores: CopiedStore[];
  /** From taking the lock to the commit. */
  elapsedMs: number;
}

/** An open source: its read-only connection, inside one read transaction. */
interface Source {
  store: StoreCopy;
  file: string;
  db: Database;
  totals: Map<string, number>;
}

function sqliteVersion(db: Database): number {
  const has = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!has) return 0;
  return (db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
}

function openSource(store: StoreCopy, file: string): Source {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const version = sqliteVersion(db);
    if (version !== store.sqliteVersion) {
      const what =
        version > store.sqliteVersion
          ? `this agent copies version ${store.sqliteVersion}: upgrade the agent`
          : `this agent copies version ${store.sqliteVersion}: start the agent once (it migrates ${store.what}), stop it, then copy`;
      throw new DocexError('DOCEX_JOURNAL_VERSION', `${file} has schema version ${version}; ${what}`, {
        details: { file, current: version, known: store.sqliteVersion },
      });
    }
    // One snapshot for every read of the copy (the lock keeps writers away; this makes it certain).
    db.exec('BEGIN');
    const totals = new Map<string, number>();
    for (const t of store.tables) {
      totals.set(
        t.table,
        Number((db.prepare(`SELECT count(*) AS n FROM ${t.table}`).get() as { n: number }).n),
      );
    }
    return { store, file, db, totals };
  } catch (err) {
    db.close();
    throw err;
  }
}

function closeSource(source: Source): void {
  if (!source.db.open) return;
  if (source.db.inTransaction) source.db.exec('ROLLBACK');
  source.db.close();
}

/** The INSERT of one batch: every column an array parameter, unnested side by side. */
function insertOf(store: StoreName, t: TableCopy): Statement {
  const names = t.columns.map((c) => c.name).join(', ');
  const arrays = t.columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
  const exprs = t.columns.map((c) => c.expr ?? c.name).join(', ');
  return {
    name: `docex_copy_${store}_${t.table}`,
    text: `INSERT INTO ${t.table} (${names}) SELECT ${exprs} FROM unnest(${arrays}) AS b (${names})`,
  };
}

/** The highest id the SQLite table ever gave (AUTOINCREMENT remembers pruned ones), or max(id). */
function highestId(db: Database, t: TableCopy, column: string): number {
  const seq = db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(t.table) as
    | { seq: number }
    | undefined;
  const max = (db.prepare(`SELECT max(${column}) AS m FROM ${t.table}`).get() as { m: number | null }).m;
  return Math.max(seq?.seq ?? 0, max ?? 0);
}

async function copyTable(
  tx: Tx,
  source: Source,
  t: TableCopy,
  batchRows: number,
  timeoutMs: number,
  onProgress: CopyOptions['onProgress'],
): Promise<number> {
  const total = source.totals.get(t.table) ?? 0;
  const columns = t.columns.map((c) => c.name).join(', ');
  const read = source.db.prepare(
    `SELECT rowid AS docex_key, ${columns} FROM ${t.table} WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  );
  const insert = allowing(insertOf(source.store.name, t), timeoutMs + batchRows * MS_PER_ROW);
  let after = Number.MIN_SAFE_INTEGER;
  let copied = 0;
  onProgress?.({ store: source.store.name, table: t.table, copied, total });
  // The next batch is read from SQLite while the server inserts the last one.
  let inserting: Promise<unknown> | undefined;
  for (;;) {
    const rows = read.all(after, batchRows) as Record<string, unknown>[];
    if (inserting) {
      await inserting;
      onProgress?.({ store: source.store.name, table: t.table, copied, total });
    }
    if (rows.length === 0) break;
    const arrays = t.columns.map((c) => rows.map((r) => (c.convert ? c.convert(r[c.name]) : r[c.name])));
    inserting = tx.rows(insert, arrays);
    copied += rows.length;
    after = rows[rows.length - 1]!['docex_key'] as number;
  }
  if (t.identity) {
    const past = highestId(source.db, t, t.identity);
    // The next id the target gives is past every id the source ever gave.
    await tx.one(
      {
        text: `SELECT setval(pg_get_serial_sequence($1, $2), greatest($3::bigint, 1), $3::bigint > 0)`,
      },
      [t.table, t.identity, past],
    );
  }
  return copied;
}

/**
 * A bulk load goes several times faster without the tables' secondary indexes and foreign keys:
 * they are dropped after the schema is created and made again, from their own definitions (same
 * names, same columns), once the rows are in. Adding a foreign key checks every row in one pass,
 * so the copy is held to the same rules. Unique indexes (primary keys included) stay.
 */
interface Deferred {
  drop: string[];
  restore: string[];
}

async function deferConstraints(tx: Tx, tables: readonly string[]): Promise<Deferred> {
  const rows = await tx.rows(
    {
      text: `SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname) AS drop,
           format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname, pg_get_constraintdef(oid)) AS restore,
           1 AS step
         FROM pg_constraint WHERE contype = 'f' AND conrelid = ANY (SELECT to_regclass(t) FROM unnest($1::text[]) AS t)
       UNION ALL
       SELECT format('DROP INDEX %s', indexrelid::regclass), pg_get_indexdef(indexrelid), 0
         FROM pg_index WHERE NOT indisunique AND indrelid = ANY (SELECT to_regclass(t) FROM unnest($1::text[]) AS t)
       ORDER BY step DESC`,
    },
    [tables],
  );
  for (const r of rows) await tx.one({ text: String(r['drop']) });
  // Indexes first (step 0), then the foreign keys, whose check may use them.
  return {
    drop: rows.map((r) => String(r['drop'])),
    restore: rows.map((r) => String(r['restore'])).reverse(),
  };
}

/**
 * A failure's message without the sources' secrets: PgSession already cuts a URL's query off, the
 * rest of an upload URL goes too (the server's message may quote a row it refused).
 */
function withoutSecrets(err: unknown, sources: readonly Source[]): unknown {
  if (!(err instanceof DocexError)) return err;
  let message = err.message;
  for (const source of sources) {
    if (!source.db.open) continue;
    for (const secret of source.store.secrets(source.db)) {
      for (const part of [secret, secret.split(/[?#]/)[0]!]) {
        if (part.length >= 8) message = message.split(part).join(REDACTED);
      }
    }
  }
  return message === err.message
    ? err
    : new DocexError(err.code, message, err.details ? { details: err.details } : undefined);
}

/** The target's counts must be the source's, or nothing is committed. */
async function verify(tx: Tx, source: Source, copied: Map<string, number>): Promise<void> {
  for (const t of source.store.tables) {
    const there = Number((await tx.one({ text: `SELECT count(*) AS n FROM ${t.table}` }))?.['n'] ?? -1);
    const expected = source.totals.get(t.table) ?? 0;
    if (there !== expected || copied.get(t.table) !== expected) {
      throw new DocexError(
        'DOCEX_INTERNAL',
        `the copy of ${t.table} counts ${there} row(s) on PostgreSQL, ${expected} in ${source.file}: nothing was committed`,
        { details: { table: t.table, target: there, source: expected } },
      );
    }
  }
}

/**
 * Copies the state folder's SQLite stores into the empty PostgreSQL database of `connection`, in
 * one transaction (see the module's comment). Throws DOCEX_JOURNAL_LOCKED (an agent runs),
 * DOCEX_JOURNAL_VERSION (a source not at its current version), DOCEX_CLI_USAGE (no source, or a
 * target that already holds a journal), DOCEX_JOURNAL_UNAVAILABLE (the target refused or failed).
 */
export async function copyToPostgres(options: CopyOptions): Promise<CopyResult> {
  const started = performance.now();
  const clock = options.clock ?? systemClock;
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? DEFAULT_BATCH_ROWS));
  for (const store of STORES) {
    const file = options.sources[store.name];
    if (!existsSync(file)) {
      throw new DocexError('DOCEX_CLI_USAGE', `no ${store.what} at ${file}: there is nothing to copy`, {
        details: { file },
      });
    }
  }
  const lock = acquireJournalLock(options.stateDir);
  const sources: Source[] = [];
  let session: PgSession | undefined;
  try {
    for (const store of STORES) sources.push(openSource(store, options.sources[store.name]));
    session = PgSession.open(options.connection, { max: 1 });
    const db = session;
    const copied = await db.transaction('journal copy', async (tx) => {
      // An agent starting on the target waits here, then finds the journal copied.
      await tx.one({ text: `SELECT pg_advisory_xact_lock(${LOCK_SPACE.schema}, 1)` });
      // The server's own limit per statement, as long as the client's for a batch.
      await tx.one({ text: "SELECT set_config('statement_timeout', $1, true)" }, [
        String(Math.ceil(db.timeoutMs + batchRows * MS_PER_ROW)),
      ]);
      for (const source of sources) {
        const why = await source.store.occupied(tx);
        if (why !== undefined) {
          throw new DocexError(
            'DOCEX_CLI_USAGE',
            `the database at ${db.location} is not empty: ${why}. Copy only into a new, empty database (or drop what is there, after making sure no agent uses it)`,
            { details: { location: db.location } },
          );
        }
      }
      const now = clock.now();
      const result: CopiedStore[] = [];
      for (const source of sources) {
        await source.store.createSchema(tx, now);
        const deferred = await deferConstraints(
          tx,
          source.store.tables.map((t) => t.table),
        );
        const rows = new Map<string, number>();
        for (const t of source.store.tables) {
          rows.set(t.table, await copyTable(tx, source, t, batchRows, db.timeoutMs, options.onProgress));
        }
        // Building an index or checking a key reads every row: allowed time in proportion.
        const all = [...source.totals.values()].reduce((a, b) => a + b, 0);
        await tx.one({ text: "SELECT set_config('statement_timeout', $1, true)" }, [
          String(Math.ceil(db.timeoutMs + all * MS_PER_ROW)),
        ]);
        for (const statement of deferred.restore) {
          await tx.one(allowing({ text: statement }, db.timeoutMs + all * MS_PER_ROW));
        }
        await tx.one({ text: "SELECT set_config('statement_timeout', $1, true)" }, [
          String(Math.ceil(db.timeoutMs + batchRows * MS_PER_ROW)),
        ]);
        await verify(tx, source, rows);
        result.push({
          name: source.store.name,
          file: source.file,
          schemaVersion: source.store.sqliteVersion,
          tables: [...rows].map(([table, n]) => ({ table, rows: n })),
          counts: source.store.counts(source.db),
        });
      }
      return result;
    });
    return { location: db.location, stores: copied, elapsedMs: performance.now() - started };
  } catch (err) {
    throw withoutSecrets(err, sources);
  } finally {
    for (const source of sources) closeSource(source);
    await session?.end().catch(() => undefined);
    lock.release();
  }
}

/** The columns the copy reads of each table of a store (tests hold them to the schemas). */
export function copiedColumns(store: StoreName): Record<string, string[]> {
  const found = STORES.find((s) => s.name === store)!;
  return Object.fromEntries(found.tables.map((t) => [t.table, t.columns.map((c) => c.name)]));
}
