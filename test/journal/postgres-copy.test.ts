/**
 * copyToPostgres (`docex-agent journal copy`) from a real SQLite journal into a real PostgreSQL
 * database: the PostgresJournal opened on the copy answers what the SQLite journal answered (items,
 * history, rows, recovery plan, stats, inspections, the upload URL, duplicates), keeps the history
 * ids the feeds' cursors name, and gives new ids past every id SQLite ever gave. Refusals (an agent
 * running, a target not empty, a source at another version) change nothing, and a failure midway
 * leaves the target empty.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { isDocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { Database } from '../../src/core/sqlite.js';
import { acquireJournalLock } from '../../src/journal/lock.js';
import { copiedColumns, copyToPostgres, toBoolean } from '../../src/journal/postgres/copy.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { PostgresJournalReader } from '../../src/journal/postgres/reader.js';
import { PG_SCHEMA_VERSION } from '../../src/journal/postgres/schema.js';
import { SCHEMA_VERSION } from '../../src/journal/schema.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { SqliteJournalReader } from '../../src/journal/sqlite-reader.js';
import type { JournalStore } from '../../src/journal/store.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { doneJournal, type MixedJournal, mixedJournal } from './support/copy-fixtures.js';
import { claimInput, UPLOAD_URL } from './support/journal-harness.js';
import { createV2Journal } from './support/v2-journal.js';

const connectionTo = (url: string) => postgresConnection(url, { tls: { mode: 'disable' } });

async function sql(url: string, text: string, values?: unknown[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** The tables of the target's public schema (a failed copy must leave none). */
const tablesOf = async (url: string) =>
  (await sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).map(
    (r) => r['tablename'],
  );

async function failure(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work;
  } catch (err) {
    if (isDocexError(err)) return { code: err.code, message: err.message };
    return { code: 'not a DocexError', message: String(err) };
  }
  throw new Error('expected a failure, got success');
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Everything a store answers about the items of the mixed journal. */
async function answers(journal: JournalStore, m: MixedJournal) {
  const ids = [m.done, m.duplicate, m.rejected, m.created, m.creating, m.payload, ...m.rows];
  return {
    items: await Promise.all(ids.map((id) => journal.get(id))),
    history: await Promise.all(ids.map((id) => journal.history(id))),
    rows: await journal.rowsOf(m.payload),
    unfinished: await journal.unfinished(),
    plan: await journal.recoveryPlan(),
    stats: await journal.stats(),
    byJob: await journal.byJobId('job-row-0'),
    byPath: await journal.byPath('/srv/erp/in/created.pdf'),
    recent: await journal.recent(),
    inspections: await journal.interruptedInspections(m.inspectedPath),
    uploadUrl: await journal.revealUploadUrl(m.created),
  };
}

describePostgres('journal copy: SQLite to PostgreSQL', () => {
  let dir: string;
  let stateDir: string;
  let file: string;
  let clock: ManualClock;
  const open: { close(): Promise<void> }[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'docex-copy-'));
    stateDir = join(dir, 'state');
    file = join(stateDir, 'journal.sqlite');
    clock = new ManualClock();
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const sqlite = () => {
    const journal = SqliteJournal.open(file, { clock, log: silentLogger() });
    open.push(journal);
    return journal;
  };
  const postgres = async (url: string) => {
    const journal = await PostgresJournal.open(connectionTo(url), { clock, log: silentLogger() });
    open.push(journal);
    return journal;
  };
  const copy = (url: string, options: { batchRows?: number } = {}) =>
    copyToPostgres({
      stateDir,
      sources: { journal: file },
      connection: connectionTo(url),
      clock,
      ...options,
    });

  it('carries every item, history entry, payload row, inspection and retry state over: PostgreSQL answers as SQLite did', async () => {
    const source = sqlite();
    const m = await mixedJournal(source, clock);
    const before = await answers(source, m);
    await source.close();
    const fileBefore = sha(file);

    const url = await testDatabase();
    // Batches of 2 rows: many INSERTs in the one transaction.
    const result = await copy(url, { batchRows: 2 });
    expect(result.location).toBe(url);
    const [journal] = result.stores;
    expect(journal).toMatchObject({ name: 'journal', file, schemaVersion: SCHEMA_VERSION });
    const counted = Object.fromEntries(journal!.tables.map((t) => [t.table, t.rows]));
    expect(counted).toEqual({ items: 9, history: expect.any(Number), inspections: 1 });
    expect(journal!.counts).toEqual([
      {
        label: 'items',
        n: 9,
        parts: [
          { label: 'files', n: 6 },
          { label: 'payload rows', n: 3 },
        ],
      },
      { label: 'history entries', n: counted['history'] },
      { label: 'inspections', n: 1 },
    ]);
    // The source is read, never written.
    expect(sha(file)).toBe(fileBefore);

    const target = await postgres(url);
    const after = await answers(target, m);
    expect(after).toEqual(before);
    expect(after.uploadUrl).toBe(UPLOAD_URL);
    expect(after.items.find((i) => i?.id === m.creating)).toMatchObject({
      failedTries: 1,
      lastFailureCode: 'DOCEX_NETWORK',
    });
    expect(after.items.find((i) => i?.id === m.created)).toMatchObject({
      lostAnswers: 1,
      hasUploadUrl: true,
    });

    // The done file's content is still a duplicate, naming the same earlier item.
    const again = await target.recordClaim(claimInput({ fileName: 'once-more.pdf', sha256: m.doneSha256 }));
    expect(again.kind).toBe('duplicate');
    expect(again.kind === 'duplicate' && again.earlier.id).toBe(m.done);
    // New ids come after every id SQLite gave, the pruned file's included; history ids after the copied ones.
    expect(again.item.id).toBe(m.prunedId + 1);
    const maxHistory = Number((await sql(url, 'SELECT max(id) AS m FROM history'))[0]!['m']);
    const newEntries = await sql(url, 'SELECT id FROM history WHERE item_id = $1', [again.item.id]);
    expect(Number(newEntries[0]!['id'])).toBe(maxHistory);
    expect(maxHistory).toBeGreaterThan(counted['history']!);
  });

  it('keeps history ids: the feeds read the same entries with the same cursors', async () => {
    const source = sqlite();
    await mixedJournal(source, clock);
    await source.close();
    const url = await testDatabase();
    await copy(url);
    const a = SqliteJournalReader.open(file, { busyTimeoutMs: 1000 });
    const b = await PostgresJournalReader.open(connectionTo(url));
    open.push(a, b);
    expect(await b.historyAfter(0, 1000)).toEqual(await a.historyAfter(0, 1000));
    expect(await b.historyAfter(5, 3)).toEqual(await a.historyAfter(5, 3));
    expect(await b.doneJobsAfter(0, 100)).toEqual(await a.doneJobsAfter(0, 100));
    expect(await b.pendingUploads()).toEqual(await a.pendingUploads());
    expect(await b.waiting()).toEqual(await a.waiting());
  });

  it("makes the same schema as the agent's own migrations: tables, columns, indexes, keys, version", async () => {
    const source = sqlite();
    await mixedJournal(source, clock);
    await source.close();
    const copied = await testDatabase();
    await copy(copied);
    const made = await testDatabase();
    await (await postgres(made)).close();
    const shape = async (url: string) => ({
      columns: await sql(
        url,
        `SELECT table_name, column_name, data_type, is_nullable, column_default, is_identity
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
      ),
      indexes: await sql(
        url,
        "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
      ),
      constraints: await sql(
        url,
        `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
         WHERE connamespace = 'public'::regnamespace ORDER BY 1`,
      ),
      versions: (await sql(url, 'SELECT version FROM schema_migrations ORDER BY 1')).map((r) => r['version']),
    });
    const [a, b] = [await shape(copied), await shape(made)];
    expect(a).toEqual(b);
    expect(a.versions.at(-1)).toBe(PG_SCHEMA_VERSION);
    // Every column of the SQLite journal is copied, and nothing else.
    const db = new Database(file, { readonly: true });
    try {
      for (const [table, columns] of Object.entries(copiedColumns('journal'))) {
        const names = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map(
          (c) => c.name,
        );
        expect(columns.slice().sort(), table).toEqual(names.slice().sort());
      }
    } finally {
      db.close();
    }
  });

  it('copies what is still only in the WAL, as a killed agent leaves it', async () => {
    const source = sqlite();
    await mixedJournal(source, clock);
    const last = await source.recordClaim(claimInput({ fileName: 'last.pdf', sha256: 'f'.repeat(64) }));
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
    // Not closed: no checkpoint has moved the last claim into the main file.
    const url = await testDatabase();
    await copy(url);
    const target = await postgres(url);
    expect(await target.get(last.item.id)).toEqual(last.item);
  });

  it('copies an empty journal, and the target then gives ids from 1', async () => {
    await sqlite().close();
    const url = await testDatabase();
    const result = await copy(url);
    expect(result.stores[0]!.tables.map((t) => t.rows)).toEqual([0, 0, 0]);
    const target = await postgres(url);
    const claim = await target.recordClaim(claimInput());
    expect(claim.item.id).toBe(1);
  });

  it('refuses while an agent holds the state folder, naming its pid, and writes nothing', async () => {
    await sqlite().close();
    const lock = acquireJournalLock(stateDir);
    try {
      const url = await testDatabase();
      const refused = await failure(copy(url));
      expect(refused.code).toBe('DOCEX_JOURNAL_LOCKED');
      expect(refused.message).toContain(`pid ${process.pid}`);
      expect(await tablesOf(url)).toEqual([]);
    } finally {
      lock.release();
    }
  });

  it('refuses a target that already holds a journal, copied or made by an agent, or items', async () => {
    const source = sqlite();
    await mixedJournal(source, clock);
    await source.close();
    const url = await testDatabase();
    await copy(url);
    const twice = await failure(copy(url));
    expect(twice.code).toBe('DOCEX_CLI_USAGE');
    expect(twice.message).toMatch(/not empty: it already has a journal \(schema version \d+\)/);

    // An agent started on it once: no items yet, but the journal's schema.
    const started = await testDatabase();
    await (await postgres(started)).close();
    expect((await failure(copy(started))).message).toContain('already has a journal');

    // An items table with rows, whatever made it.
    const other = await testDatabase();
    await sql(other, 'CREATE TABLE items (id bigint); INSERT INTO items VALUES (1)');
    expect((await failure(copy(other))).message).toContain('its items table already has rows');
    expect(await tablesOf(other)).toEqual(['items']);

    // A table of the journal, even empty: the copy's CREATE TABLE could not make it.
    const table = await testDatabase();
    await sql(table, 'CREATE TABLE inspections (path text)');
    const refused = await failure(copy(table));
    expect(refused.code).toBe('DOCEX_CLI_USAGE');
    expect(refused.message).toContain('it already has a table inspections (empty)');
    expect(await tablesOf(table)).toEqual(['inspections']);
  });

  it('refuses a source at an older or newer schema version, and a missing one', async () => {
    createV2Journal(file, clock.now()).close();
    const url = await testDatabase();
    const older = await failure(copy(url));
    expect(older.code).toBe('DOCEX_JOURNAL_VERSION');
    expect(older.message).toContain('has schema version 2');
    expect(older.message).toContain('start the agent once');

    rmSync(stateDir, { recursive: true });
    await sqlite().close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      SCHEMA_VERSION + 1,
      0,
    );
    db.close();
    const newer = await failure(copy(url));
    expect(newer.code).toBe('DOCEX_JOURNAL_VERSION');
    expect(newer.message).toContain('upgrade the agent');

    const missing = await failure(
      copyToPostgres({
        stateDir: join(dir, 'nothing'),
        sources: { journal: join(dir, 'nothing', 'journal.sqlite') },
        connection: connectionTo(url),
      }),
    );
    expect(missing.code).toBe('DOCEX_CLI_USAGE');
    expect(missing.message).toContain('nothing to copy');
    expect(await tablesOf(url)).toEqual([]);
  });

  it('leaves the target empty when the server refuses a row midway, and copies once the cause is gone', async () => {
    const source = sqlite();
    await mixedJournal(source, clock);
    await source.close();
    const url = await testDatabase();
    // The target rejects the 7th history entry: a row trigger, put on `history` by an event trigger
    // as soon as the copy creates the table (inside the copy's own transaction).
    await sql(
      url,
      `CREATE FUNCTION refuse_seventh() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.id = 7 THEN RAISE EXCEPTION 'the test refuses history entry %', NEW.id; END IF;
         RETURN NEW;
       END $$;
       CREATE FUNCTION arm() RETURNS event_trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() WHERE object_identity = 'public.history') THEN
           EXECUTE 'CREATE TRIGGER refuse_seventh BEFORE INSERT ON history FOR EACH ROW EXECUTE FUNCTION refuse_seventh()';
         END IF;
       END $$;
       CREATE EVENT TRIGGER arm ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION arm();`,
    );
    const refused = await failure(copy(url, { batchRows: 2 }));
    expect(refused.code).toBe('DOCEX_JOURNAL_UNAVAILABLE');
    expect(refused.message).toContain('the test refuses history entry 7');
    expect(refused.message).not.toContain('SIGNATURE');
    // Nothing of the journal is there: no table, no row, no version.
    expect(await tablesOf(url)).toEqual([]);
    // The state folder's lock was given back.
    acquireJournalLock(stateDir).release();

    await sql(url, 'DROP EVENT TRIGGER arm');
    await copy(url, { batchRows: 2 });
    expect(await tablesOf(url)).toEqual([
      'agents',
      'cluster_tasks',
      'history',
      'inspections',
      'items',
      'schema_migrations',
    ]);
  });

  it('copies a journal of 2,000 done files in batches, as counted', async () => {
    await doneJournal(file, { files: 2_000 });
    const url = await testDatabase();
    const seen: number[] = [];
    const result = await copyToPostgres({
      stateDir: dirname(file),
      sources: { journal: file },
      connection: connectionTo(url),
      batchRows: 500,
      onProgress: (p) => {
        if (p.table === 'history') seen.push(p.copied);
      },
    });
    expect(result.stores[0]!.tables).toEqual([
      { table: 'items', rows: 2_000 },
      { table: 'history', rows: 6_000 },
      { table: 'inspections', rows: 0 },
    ]);
    expect(seen).toEqual([0, 500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000, 5500, 6000]);
    const target = await postgres(url);
    expect((await target.stats()).files.done).toBe(2_000);
    expect((await target.history(2_000)).map((h) => h.to)).toEqual(['claimed', 'created', 'done']);
    // Analyzed by the copy: the first agent's queries are planned on what the tables hold.
    const analyzed = await sql(
      url,
      `SELECT tablename, count(*)::int AS columns FROM pg_stats
       WHERE tablename IN ('items', 'history') GROUP BY tablename ORDER BY tablename`,
    );
    expect(analyzed.map((r) => r['tablename'])).toEqual(['history', 'items']);
  });
});

describe('journal copy without a server', () => {
  it('names every column of the SQLite journal it copies', () => {
    expect(Object.keys(copiedColumns('journal'))).toEqual(['items', 'history', 'inspections']);
  });

  it('turns SQLite 0/1 into booleans and refuses anything else rather than guess', () => {
    expect([0, 1, null].map((v) => toBoolean(v, 'items.allow_duplicates'))).toEqual([false, true, null]);
    for (const odd of [2, -1, '1', 0.5]) {
      expect(() => toBoolean(odd, 'items.allow_duplicates')).toThrow(
        /items\.allow_duplicates holds .* where 0 or 1 is expected: nothing was committed/,
      );
    }
  });
});
