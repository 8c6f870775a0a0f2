/**
 * `docex-agent journal copy`: a stopped agent's SQLite stores copied into an empty PostgreSQL
 * database, so the agent can move there and keep its duplicate detection, unfinished items,
 * history, inspections and retry state (and, with the return path's stores, the jobs it follows
 * and where it stands in them).
 *
 * - The agent must be stopped: the state folder's lock is taken for the whole copy (a running
 *   agent holds it, and is named).
 * - A source must be at its current SQLite schema version (an older one: start the agent once, it
 *   migrates). Nothing is written to it: it is opened read-only, in one read transaction.
 * - The target must hold none of the stores yet (no migration record, no table of theirs).
 *   Everything happens in ONE PostgreSQL transaction, under the stores' schema advisory locks (an
 *   agent starting on the target meanwhile waits): each schema is created by its store's own
 *   PostgreSQL migrations, the rows go in batches (one INSERT … SELECT FROM unnest
 *   per batch and table), the identity sequences are moved past the highest id the SQLite file
 *   ever gave (AUTOINCREMENT: ids are never reused, pruned ones included), the counts are
 *   compared, then it commits. A failure anywhere rolls it all back: the target is left empty.
 * - Ids are kept. The history's ids are the cursors of the return path's feed (returns.sqlite
 *   keeps the last one it read) and of the ops totals, so they keep their meaning on PostgreSQL.
 * - The upload URL of a created job is copied (its upload must still be finished), never logged
 *   or shown: pg's errors leave through PgSession, which keeps neither their detail nor a URL's query.
 *
 * Each SQLite store of the state folder is one StoreCopy: its source file, its version, how to
 * tell the target already has it, its PostgreSQL schema and its tables. The journal's is here
 * (JOURNAL_COPY); returns.sqlite's and inbox.sqlite's are the return path's
 * (returns/postgres/copy.ts: this folder may not import it), which passes all three. Every store
 * given is copied in the same transaction, each under its own schema lock too; a store that is not
 * `required` and whose file is absent has nothing to copy (it is named in the result's `absent`),
 * but the target must not have it either. The SQL run on a source is the StoreCopy's: its tables,
 * columns and counts, read-only.
 */
import { existsSync } from 'node:fs';
import { type Clock, systemClock } from '../../core/clock.js';
import type { ErrorCode } from '../../core/error-codes.js';
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
export interface Column {
  name: string;
  /** The type unnest() reads the batch's array as: `bigint`, `text`, `boolean`, … */
  type: string;
  /** The SELECT expression over the unnested value (a cast), when not the value itself. */
  expr?: string;
  /** SQLite value → the value sent (0/1 → boolean); `where` names the column in a refusal. */
  convert?: (value: unknown, where: string) => unknown;
}

/**
 * One table copied as it is. Read in the order of its SQLite rowid (parents before their payload
 * rows), or of `key` for a table WITHOUT ROWID.
 */
export interface TableCopy {
  /** The table on PostgreSQL. */
  table: string;
  /** The table in the SQLite file, when its name differs (returns.sqlite's `jobs`: `returns_jobs`). */
  from?: string;
  /** A unique, non-null column to read the table in the order of, instead of its rowid. */
  key?: string;
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

/** A count of the source: `sql` answers one row with a column `n`. */
export interface CountQuery {
  label: string;
  sql: string;
  parts?: readonly CountQuery[];
}

/** The stores of a state folder. */
export type StoreName = 'journal' | 'returns' | 'inbox';

/** One SQLite store of the state folder and how it goes to PostgreSQL. */
export interface StoreCopy {
  /** The name the caller gives its file under (CopySources). */
  name: StoreName;
  /** How messages name the source: `journal.sqlite`. */
  what: string;
  /** An absent file is refused (the journal), or has nothing to copy (the return path's stores). */
  required: boolean;
  /** The SQLite schema version the tables below describe: a source must be at it. */
  sqliteVersion: number;
  /** The code of a source at another version. */
  versionCode: ErrorCode;
  /** The second key of the store's migration lock (LOCK_SPACE.schema): held for the whole copy. */
  lockKey: number;
  /** Why the target cannot take this store (it already has it), or undefined when it can. */
  occupied(tx: Tx): Promise<string | undefined>;
  /** Creates the store's tables on the target, at its current PostgreSQL version, inside `tx`. */
  createSchema(tx: Tx, now: number): Promise<void>;
  tables: readonly TableCopy[];
  /** The counts reported, read from the source (in its read transaction). */
  counts: readonly CountQuery[];
  /** A query of the source answering, in a column `secret`, values no message may show. */
  secrets?: string;
}

const bigint = (name: string): Column => ({ name, type: 'bigint' });
const int = (name: string): Column => ({ name, type: 'integer' });
const text = (name: string): Column => ({ name, type: 'text' });

/** SQLite's 0/1 as a boolean; anything else is refused rather than guessed at. */
export function toBoolean(value: unknown, where: string): boolean | null {
  if (value === null || value === undefined) return null;
  if (value === 0 || value === 1) return value === 1;
  throw new DocexError(
    'DOCEX_INTERNAL',
    `${where} holds ${JSON.stringify(value)} where 0 or 1 is expected: nothing was committed`,
    { details: { column: where } },
  );
}

/** The column builders of a StoreCopy's tables. */
export const columns = {
  bigint,
  int,
  text,
  boolean: (name: string): Column => ({ name, type: 'boolean', convert: toBoolean }),
};

const regclass = (tx: Tx, table: string) =>
  tx
    .one({ text: 'SELECT to_regclass($1) IS NOT NULL AS present' }, [table])
    .then((r) => r?.['present'] === true);

/**
 * Why the target already holds a store: its migration record has a version, or one of its tables
 * is there (with rows, or empty: either way the copy's CREATE TABLE could not make it).
 */
export async function occupiedBy(
  tx: Tx,
  store: { versions: string; what: string; tables: readonly string[] },
): Promise<string | undefined> {
  if (await regclass(tx, store.versions)) {
    const v = await tx.one({ text: `SELECT count(*)::int AS n, max(version) AS v FROM ${store.versions}` });
    if (Number(v?.['n'] ?? 0) > 0) return `it already has ${store.what} (schema version ${String(v?.['v'])})`;
  }
  for (const table of store.tables) {
    if (!(await regclass(tx, table))) continue;
    const any = await tx.one({ text: `SELECT EXISTS (SELECT 1 FROM ${table}) AS any` });
    return any?.['any'] === true
      ? `its ${table} table already has rows`
      : `it already has a table ${table} (empty)`;
  }
  return undefined;
}

export const JOURNAL_COPY: StoreCopy = {
  name: 'journal',
  what: 'journal.sqlite',
  required: true,
  sqliteVersion: SQLITE_JOURNAL_VERSION,
  versionCode: 'DOCEX_JOURNAL_VERSION',
  lockKey: 1,
  occupied(tx) {
    return occupiedBy(tx, {
      versions: 'schema_migrations',
      what: 'a journal',
      tables: ['items', 'history', 'inspections'],
    });
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
        text('managed_company_id'),
        text('mode'),
        text('file_name'),
        text('source_path'),
        text('relative_path'),
        text('claimed_path'),
        bigint('size'),
        { name: 'mtime_ms', type: 'double precision' },
        text('sha256'),
        columns.boolean('allow_duplicates'),
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
  counts: [
    {
      label: 'items',
      sql: 'SELECT count(*) AS n FROM items',
      parts: [
        { label: 'files', sql: "SELECT count(*) AS n FROM items WHERE kind = 'file'" },
        { label: 'payload rows', sql: "SELECT count(*) AS n FROM items WHERE kind = 'row'" },
      ],
    },
    { label: 'history entries', sql: 'SELECT count(*) AS n FROM history' },
    { label: 'inspections', sql: 'SELECT count(*) AS n FROM inspections' },
  ],
  secrets: 'SELECT upload_url AS secret FROM items WHERE upload_url IS NOT NULL',
};

/** Where each store's SQLite file is (the state folder's journal.sqlite, …). */
export type CopySources = Partial<Record<StoreName, string>>;

export interface CopyProgress {
  store: StoreName;
  /** The table on PostgreSQL. */
  table: string;
  /** Rows of this table copied so far, and in all. */
  copied: number;
  total: number;
}

export interface CopyOptions {
  /** The state folder: its lock is held for the whole copy. */
  stateDir: string;
  /** The file of each store copied (a store without one here is not copied, nor looked for). */
  sources: CopySources;
  /** The stores copied, in this order (default: the journal only; see returns/postgres/copy.ts). */
  stores?: readonly StoreCopy[];
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
  /** Rows per table (its name on PostgreSQL). */
  tables: { table: string; rows: number }[];
  counts: CopyCount[];
}

/** A store whose file is not there: nothing of it was copied, and the target has none of it. */
export interface AbsentStore {
  name: StoreName;
  file: string;
}

export interface CopyResult {
  /** The target, without its password. */
  location: string;
  stores: CopiedStore[];
  absent: AbsentStore[];
  /** From taking the lock to the commit. */
  elapsedMs: number;
}

/** An open source: its read-only connection, inside one read transaction. */
interface Source {
  store: StoreCopy;
  file: string;
  db: Database;
  /** Rows per table, by its name on PostgreSQL. */
  totals: Map<string, number>;
}

const sourceTable = (t: TableCopy) => t.from ?? t.table;

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
      throw new DocexError(store.versionCode, `${file} has schema version ${version}; ${what}`, {
        details: { file, current: version, known: store.sqliteVersion },
      });
    }
    // One snapshot for every read of the copy (the lock keeps writers away; this makes it certain).
    db.exec('BEGIN');
    const totals = new Map<string, number>();
    for (const t of store.tables) {
      totals.set(
        t.table,
        Number((db.prepare(`SELECT count(*) AS n FROM ${sourceTable(t)}`).get() as { n: number }).n),
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

function countOf(db: Database, q: CountQuery): CopyCount {
  const n = Number((db.prepare(q.sql).get() as { n: number }).n);
  return { label: q.label, n, ...(q.parts ? { parts: q.parts.map((p) => countOf(db, p)) } : {}) };
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
  const hasSequence = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'")
    .get();
  const seq = hasSequence
    ? (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(sourceTable(t)) as
        | { seq: number }
        | undefined)
    : undefined;
  const max = (db.prepare(`SELECT max(${column}) AS m FROM ${sourceTable(t)}`).get() as { m: number | null })
    .m;
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
  const names = t.columns.map((c) => c.name).join(', ');
  const key = t.key ?? 'rowid';
  const from = sourceTable(t);
  // The first batch from the start, the next ones after the last key read (no "lowest key" to
  // start after: a text key may sort below any value given).
  const first = source.db.prepare(
    `SELECT ${key} AS docex_key, ${names} FROM ${from} ORDER BY ${key} LIMIT ?`,
  );
  const next = source.db.prepare(
    `SELECT ${key} AS docex_key, ${names} FROM ${from} WHERE ${key} > ? ORDER BY ${key} LIMIT ?`,
  );
  const insert = allowing(insertOf(source.store.name, t), timeoutMs + batchRows * MS_PER_ROW);
  let after: unknown;
  let copied = 0;
  onProgress?.({ store: source.store.name, table: t.table, copied, total });
  // The next batch is read from SQLite while the server inserts the last one.
  let inserting: Promise<unknown> | undefined;
  for (;;) {
    const rows = (copied === 0 ? first.all(batchRows) : next.all(after, batchRows)) as Record<
      string,
      unknown
    >[];
    if (inserting) {
      await inserting;
      onProgress?.({ store: source.store.name, table: t.table, copied, total });
    }
    if (rows.length === 0) break;
    const arrays = t.columns.map((c) =>
      rows.map((r) =>
        c.convert ? c.convert(r[c.name], `${source.store.what} ${from}.${c.name}`) : r[c.name],
      ),
    );
    inserting = tx.rows(insert, arrays);
    copied += rows.length;
    after = rows[rows.length - 1]!['docex_key'];
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
    if (!source.db.open || source.store.secrets === undefined) continue;
    const secrets = (source.db.prepare(source.store.secrets).all() as { secret: unknown }[]).map((r) =>
      String(r.secret),
    );
    for (const secret of secrets) {
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

/** The statement_timeout of the transaction from here on. */
const statementTimeout = (tx: Tx, ms: number) =>
  tx.one({ text: "SELECT set_config('statement_timeout', $1, true)" }, [String(Math.ceil(ms))]);

/** Creates one store's schema on the target and copies its rows into it. */
async function copyStore(
  tx: Tx,
  source: Source,
  now: number,
  limits: { batchRows: number; timeoutMs: number },
  onProgress: CopyOptions['onProgress'],
): Promise<CopiedStore> {
  const { batchRows, timeoutMs } = limits;
  await source.store.createSchema(tx, now);
  const deferred = await deferConstraints(
    tx,
    source.store.tables.map((t) => t.table),
  );
  const rows = new Map<string, number>();
  for (const t of source.store.tables) {
    rows.set(t.table, await copyTable(tx, source, t, batchRows, timeoutMs, onProgress));
  }
  // Building an index or checking a key reads every row: allowed time in proportion.
  const all = [...source.totals.values()].reduce((a, b) => a + b, 0);
  await statementTimeout(tx, timeoutMs + all * MS_PER_ROW);
  for (const statement of deferred.restore) {
    await tx.one(allowing({ text: statement }, timeoutMs + all * MS_PER_ROW));
  }
  await statementTimeout(tx, timeoutMs + batchRows * MS_PER_ROW);
  await verify(tx, source, rows);
  return {
    name: source.store.name,
    file: source.file,
    schemaVersion: source.store.sqliteVersion,
    tables: [...rows].map(([table, n]) => ({ table, rows: n })),
    counts: source.store.counts.map((q) => countOf(source.db, q)),
  };
}

/**
 * Copies the state folder's SQLite stores into the empty PostgreSQL database of `connection`, in
 * one transaction (see the module's comment). Throws DOCEX_JOURNAL_LOCKED (an agent runs), the
 * store's version code (DOCEX_JOURNAL_VERSION, …: a source not at its current version),
 * DOCEX_CLI_USAGE (no journal, or a target that already holds one of the stores),
 * DOCEX_JOURNAL_UNAVAILABLE (the target refused or failed).
 */
export async function copyToPostgres(options: CopyOptions): Promise<CopyResult> {
  const started = performance.now();
  const clock = options.clock ?? systemClock;
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? DEFAULT_BATCH_ROWS));
  const stores = options.stores ?? [JOURNAL_COPY];
  const present: { store: StoreCopy; file: string }[] = [];
  const absent: AbsentStore[] = [];
  for (const store of stores) {
    const file = options.sources[store.name];
    if (file === undefined) {
      throw new DocexError('DOCEX_INTERNAL', `journal copy: no file given for ${store.what}`);
    }
    if (existsSync(file)) present.push({ store, file });
    else if (!store.required) absent.push({ name: store.name, file });
    else {
      throw new DocexError('DOCEX_CLI_USAGE', `no ${store.what} at ${file}: there is nothing to copy`, {
        details: { file },
      });
    }
  }
  const lock = acquireJournalLock(options.stateDir);
  const sources: Source[] = [];
  let session: PgSession | undefined;
  try {
    for (const { store, file } of present) sources.push(openSource(store, file));
    session = PgSession.open(options.connection, { max: 1 });
    const db = session;
    const copied = await db.transaction('journal copy', async (tx) => {
      // An agent starting on the target waits here (each store migrates under its own key, in
      // this order), then finds the stores copied.
      for (const key of stores.map((s) => s.lockKey).sort((a, b) => a - b)) {
        await tx.one({ text: `SELECT pg_advisory_xact_lock(${LOCK_SPACE.schema}, ${key})` });
      }
      // The server's own limit per statement, as long as the client's for a batch.
      await statementTimeout(tx, db.timeoutMs + batchRows * MS_PER_ROW);
      // Every store is looked for, those without a file too: the target must hold none of them.
      for (const store of stores) {
        const why = await store.occupied(tx);
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
        result.push(
          await copyStore(tx, source, now, { batchRows, timeoutMs: db.timeoutMs }, options.onProgress),
        );
      }
      // Statistics of the tables filled, before the first agent plans a query on them: without
      // any, the planner guessed a year's 100,000 items at a cost that turned on JIT, and the
      // agent's first readiness check took 0.6 s (its pending uploads, 30 ms once analyzed).
      for (const { store } of present) {
        for (const t of store.tables) await tx.one({ text: `ANALYZE ${t.table}` });
      }
      return result;
    });
    return { location: db.location, stores: copied, absent, elapsedMs: performance.now() - started };
  } catch (err) {
    throw withoutSecrets(err, sources);
  } finally {
    for (const source of sources) closeSource(source);
    await session?.end().catch(() => undefined);
    lock.release();
  }
}

/**
 * The columns the copy reads of each table of a store, by the table's name in the SQLite file
 * (tests hold them to the schemas); the journal's by default.
 */
export function copiedColumns(store: StoreName | StoreCopy): Record<string, string[]> {
  const found = typeof store === 'string' ? [JOURNAL_COPY].find((s) => s.name === store) : store;
  if (!found) throw new Error(`copiedColumns: not a store of this module: ${String(store)}`);
  return Object.fromEntries(found.tables.map((t) => [sourceTable(t), t.columns.map((c) => c.name)]));
}
