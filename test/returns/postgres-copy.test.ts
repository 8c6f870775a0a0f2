/**
 * `journal copy` of a whole state folder (copyStateToPostgres): the journal, returns.sqlite and
 * inbox.sqlite written through their own APIs, copied in one transaction into a real PostgreSQL
 * database, then opened through the public openers as an agent with journal.url opens them. They
 * answer as the SQLite stores did (jobs, events with their JSON byte for byte, documents, counts,
 * meta, the Peppol mark, webhook ids seen); the follower's feed cursor goes on where it stood; a
 * target holding any of the three stores is refused; a failure in the return path's part leaves
 * the target empty, the journal included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { isDocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { Database } from '../../src/core/sqlite.js';
import type { JournalLocation } from '../../src/journal/index.js';
import { copiedColumns } from '../../src/journal/postgres/copy.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { PostgresJournalReader } from '../../src/journal/postgres/reader.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { FEED_CURSOR } from '../../src/returns/follower.js';
import type { InboxStore } from '../../src/returns/inbox-store.js';
import {
  openExistingReturnsStore,
  openInboxStore,
  openReturnsReader,
  openReturnsStore,
} from '../../src/returns/open-stores.js';
import {
  copyStateToPostgres,
  INBOX_COPY,
  RETURNS_COPY,
  type StateCopyOptions,
} from '../../src/returns/postgres/copy.js';
import { INBOX_COMPONENT, latestVersionOf, RETURNS_COMPONENT } from '../../src/returns/postgres/schema.js';
import { INBOX_SCHEMA_VERSION } from '../../src/returns/sqlite-inbox-store.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { RETURNS_SCHEMA_VERSION } from '../../src/returns/store-schema.js';
import { claimedFile, toDone } from '../journal/support/steps.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import {
  type FilledState,
  fillState,
  followerOn,
  ODD_EVENT_JSON,
  ODD_JOB_JSON,
} from './support/state-fixtures.js';

const connectionTo = (url: string) => postgresConnection(url, { tls: { mode: 'disable' } });
const pgLocation = (url: string): JournalLocation => ({ kind: 'postgres', connection: connectionTo(url) });

async function sql(url: string, text: string, values?: unknown[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

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

/** Everything the returns store answers about the filled state. */
async function returnsAnswers(store: ReturnsStore, s: FilledState) {
  const jobs = await Promise.all(s.followed.map((id) => store.job(id)));
  const sourceIds = [...new Set(jobs.map((j) => j!.sourceId))];
  const events = ['se_a1', 'se_a2'];
  const day = (await store.event('se_a1'))!.finalDay!;
  return {
    jobs,
    unfollowed: await store.job(s.unfollowed),
    sources: await Promise.all(sourceIds.map((id) => store.source(id))),
    jobsOfSources: await Promise.all(sourceIds.map((id) => store.jobsOfSource(id))),
    eventPages: await Promise.all(s.followed.map((id) => store.eventsWithDocumentsPage(id, '', 10))),
    eventsById: [...(await store.eventsById(events)).entries()],
    documents: await Promise.all(events.map((id) => store.documentsOfEvent(id))),
    allDone: await Promise.all(sourceIds.map((id) => store.allDocumentsDone(id))),
    dueJobs: await store.dueJobs(Number.MAX_SAFE_INTEGER, 100),
    dueDocuments: await store.dueDocuments(Number.MAX_SAFE_INTEGER, 100),
    stale: (await store.staleSources(100)).sort((a, b) => a.itemId - b.itemId),
    finalPage: await store.eventsFinalOnPage(day, undefined, 10),
    finalCount: await store.countFinalOn(day),
    csvDue: await store.csvDaysDue('2099-01-01'),
    counts: await store.counts(),
    openJobs: await store.openJobs(),
    cursor: await store.getMeta(FEED_CURSOR),
  };
}

async function inboxAnswers(inbox: InboxStore, s: FilledState) {
  return {
    saved: await Promise.all([...s.peppol, 'peppol-never'].map((id) => inbox.isSaved(id))),
    savedCount: await inbox.savedCount(),
    highWaterMark: await inbox.highWaterMark(),
  };
}

describePostgres('journal copy of the whole state folder: journal, returns store, inbox store', () => {
  let dir: string;
  let stateDir: string;
  let clock: ManualClock;
  const open: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(store: T): T => {
    open.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'docex-copy-state-'));
    stateDir = join(dir, 'state');
    clock = new ManualClock();
  });
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  const sqliteLocation = (): JournalLocation => ({ kind: 'sqlite', file: join(stateDir, 'journal.sqlite') });
  const sources = () => ({
    journal: join(stateDir, 'journal.sqlite'),
    returns: join(stateDir, 'returns.sqlite'),
    inbox: join(stateDir, 'inbox.sqlite'),
  });
  const copy = (url: string, options: Partial<StateCopyOptions> = {}) =>
    copyStateToPostgres({ stateDir, sources: sources(), connection: connectionTo(url), clock, ...options });

  it('carries both stores over with the journal: the PostgreSQL stores answer as the SQLite ones did', async () => {
    const s = await fillState(stateDir, clock);
    const location = sqliteLocation();
    const sqliteReturns = track(await openReturnsStore(location, stateDir, clock));
    const sqliteInbox = track(await openInboxStore(location, stateDir, clock));
    const before = {
      returns: await returnsAnswers(sqliteReturns, s),
      inbox: await inboxAnswers(sqliteInbox, s),
    };
    const sqliteReader = track(openReturnsReader(location, stateDir, { busyTimeoutMs: 1000 }));
    const followedBefore = await Promise.all(s.followed.map((id) => sqliteReader.followedJob(id)));
    for (const store of open.splice(0)) await store.close();

    const url = await testDatabase();
    // Batches of 2 rows: many INSERTs per table in the one transaction.
    const result = await copy(url, { batchRows: 2 });
    expect(result.absent).toEqual([]);
    expect(result.stores.map((c) => [c.name, c.schemaVersion])).toEqual([
      ['journal', expect.any(Number)],
      ['returns', RETURNS_SCHEMA_VERSION],
      ['inbox', INBOX_SCHEMA_VERSION],
    ]);
    const [, returnsCopied, inboxCopied] = result.stores;
    expect(returnsCopied!.tables).toEqual([
      { table: 'returns_sources', rows: 4 },
      { table: 'returns_jobs', rows: 4 },
      { table: 'returns_events', rows: 2 },
      { table: 'returns_documents', rows: 4 },
      { table: 'returns_csv_days', rows: 1 },
      { table: 'returns_meta', rows: 1 },
    ]);
    expect(returnsCopied!.counts).toEqual([
      { label: 'followed jobs', n: 4, parts: [{ label: 'open', n: 2 }] },
      { label: 'source files', n: 4 },
      { label: 'sending events', n: 2, parts: [{ label: 'final', n: 1 }] },
      {
        label: 'documents',
        n: 4,
        parts: [
          { label: 'written', n: 1 },
          { label: 'to fetch', n: 2 },
          { label: 'parked', n: 1 },
        ],
      },
      { label: 'daily CSVs written', n: 1 },
    ]);
    expect(inboxCopied!.tables).toEqual([
      { table: 'inbox_peppol_saved', rows: 3 },
      { table: 'inbox_meta', rows: 1 },
      { table: 'inbox_webhook_seen', rows: 3 },
    ]);
    expect(inboxCopied!.counts).toEqual([
      { label: 'Peppol documents saved', n: 3 },
      { label: 'webhook ids seen', n: 3 },
    ]);

    const target = pgLocation(url);
    const returns = track(await openReturnsStore(target, stateDir, clock));
    const inbox = track(await openInboxStore(target, stateDir, clock));
    const after = { returns: await returnsAnswers(returns, s), inbox: await inboxAnswers(inbox, s) };
    expect(after).toEqual(before);
    expect(after.returns.cursor).toBe(s.cursor);
    expect(after.inbox.highWaterMark).toBe(s.highWaterMark);
    expect(after.returns.jobs.map((j) => j?.done)).toEqual(before.returns.jobs.map((j) => j?.done));
    expect(after.returns.jobs.some((j) => j?.done === true)).toBe(true);
    // The service's JSON, byte for byte (json or jsonb would have rewritten it).
    expect((await returns.event('se_a1'))!.eventJson).toBe(ODD_EVENT_JSON);
    expect((await returns.job(s.followed[0]!))!.jobJson).toBe(ODD_JOB_JSON);
    const reader = track(openReturnsReader(target, stateDir, { busyTimeoutMs: 1000 }));
    expect(await Promise.all(s.followed.map((id) => reader.followedJob(id)))).toEqual(followedBefore);
    expect(await reader.proofsArchived()).toBe(1);
    // The commands' opener finds the store (it never creates one).
    expect(await openExistingReturnsStore(target, stateDir, clock).then((r) => r && track(r))).toBeDefined();

    // Webhook ids seen before the copy are not new on PostgreSQL; another one is.
    for (const id of s.webhooks)
      expect(await inbox.rememberWebhook(id, 'job.updated', 86_400_000)).toBe(false);
    expect(await inbox.rememberWebhook('wh-new', 'job.updated', 86_400_000)).toBe(true);
    // The mark only moves forward from where it was.
    await inbox.advanceHighWaterMark(s.highWaterMark - 1, 3_600_000);
    expect(await inbox.highWaterMark()).toBe(s.highWaterMark);
    // The stores go on: a parked document taken again, a poll recorded.
    expect(await returns.retryFailedDocumentsNow(clock.now())).toBe(2);
    expect((await returns.counts()).documentsParked).toBe(0);
  });

  it('keeps the feed cursor valid: a follower on PostgreSQL neither adds followed jobs again nor skips new ones', async () => {
    const s = await fillState(stateDir, clock);
    const url = await testDatabase();
    await copy(url);
    const target = pgLocation(url);

    // The cursor the PostgreSQL store holds names the same history entry in the copied journal:
    // after it, exactly the job the follower had not read on SQLite.
    const returns = track(await openReturnsStore(target, stateDir, clock));
    const cursor = await returns.getMeta(FEED_CURSOR);
    expect(cursor).toBe(s.cursor);
    const reader = track(await PostgresJournalReader.open(connectionTo(url)));
    expect((await reader.doneJobsAfter(Number(cursor), 100)).map((p) => p.jobId)).toEqual([s.unfollowed]);
    const all = await reader.doneJobsAfter(0, 100);
    expect(all.map((p) => p.jobId).sort()).toEqual([...s.followed, s.unfollowed].sort());

    // The agent on PostgreSQL: a new file done after the switch.
    const journal = track(await PostgresJournal.open(connectionTo(url), { clock, log: silentLogger() }));
    clock.advance(1000);
    const fresh = await claimedFile(journal, 'after-switch.pdf');
    await toDone(journal, fresh.id);

    const polled = await returns.job(s.followed[0]!);
    const { follower, feed } = await followerOn(target, returns, stateDir, clock);
    track(feed);
    // What the follower asks the feed for, and what it is given.
    const asked: number[] = [];
    const given: string[] = [];
    const after = feed.after.bind(feed);
    feed.after = async (at, limit) => {
      asked.push(at);
      const items = await after(at, limit);
      given.push(...items.map((i) => i.jobId));
      return items;
    };
    expect(await follower.syncFeed()).toBe(2);
    // It went on from its position: nothing it followed on SQLite was read again, nothing skipped.
    expect(asked[0]).toBe(Number(s.cursor));
    expect(given).toEqual([s.unfollowed, `job-${fresh.id}`]);
    expect(await follower.syncFeed()).toBe(0);
    expect(given).toHaveLength(2);
    const counts = await returns.counts();
    expect(counts.jobs).toBe(s.followed.length + 2);
    expect(await returns.job(s.unfollowed)).toMatchObject({ jobId: s.unfollowed, polls: 0 });
    expect(await returns.job(`job-${fresh.id}`)).toMatchObject({ polls: 0 });
    // A job followed before the copy is as it was, not recorded anew.
    expect(await returns.job(s.followed[0]!)).toEqual(polled);
    const last = (await reader.doneJobsAfter(0, 100)).at(-1)!;
    expect(last.jobId).toBe(`job-${fresh.id}`);
    expect(await returns.getMeta(FEED_CURSOR)).toBe(String(last.cursor));
  });

  it("makes the schema the stores' own migrations make: tables, columns, indexes, keys, versions, no identity", async () => {
    await fillState(stateDir, clock);
    const copied = await testDatabase();
    await copy(copied);
    const made = await testDatabase();
    await (await PostgresJournal.open(connectionTo(made), { clock, log: silentLogger() })).close();
    await (await openReturnsStore(pgLocation(made), stateDir, clock)).close();
    await (await openInboxStore(pgLocation(made), stateDir, clock)).close();
    const shape = async (url: string) => ({
      columns: await sql(
        url,
        `SELECT table_name, column_name, data_type, collation_name, is_nullable, column_default, is_identity
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
      versions: await sql(
        url,
        `SELECT 'returns' AS c, version FROM returns_schema_migrations
         UNION ALL SELECT 'inbox', version FROM inbox_schema_migrations ORDER BY 1, 2`,
      ),
    });
    const [a, b] = [await shape(copied), await shape(made)];
    expect(a).toEqual(b);
    expect(a.versions).toEqual([
      { c: 'inbox', version: latestVersionOf(INBOX_COMPONENT) },
      ...RETURNS_COMPONENT.migrations.map((m) => ({ c: 'returns', version: m.version })),
    ]);
    // Nothing to move past the copied keys: the return path's tables have no identity or sequence.
    const own = a.columns.filter((c) => /^(returns|inbox)_/.test(String(c['table_name'])));
    expect(
      own.filter((c) => c['is_identity'] === 'YES' || /nextval/.test(String(c['column_default']))),
    ).toEqual([]);
    expect(own.find((c) => c['column_name'] === 'done')?.['data_type']).toBe('boolean');

    // Every column of the SQLite tables is copied, and nothing else; the same names on PostgreSQL.
    for (const [store, file, prefix] of [
      [RETURNS_COPY, 'returns.sqlite', 'returns_'],
      [INBOX_COPY, 'inbox.sqlite', 'inbox_'],
    ] as const) {
      const db = new Database(join(stateDir, file), { readonly: true });
      try {
        const sqliteTables = (
          db
            .prepare(
              "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('schema_migrations', 'sqlite_sequence')",
            )
            .all() as { name: string }[]
        ).map((t) => t.name);
        expect(Object.keys(copiedColumns(store)).sort()).toEqual(sqliteTables.sort());
        for (const [table, columns] of Object.entries(copiedColumns(store))) {
          const names = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map(
            (c) => c.name,
          );
          expect(columns.slice().sort(), table).toEqual(names.slice().sort());
          const onPostgres = own
            .filter((c) => c['table_name'] === `${prefix}${table}`)
            .map((c) => c['column_name']);
          expect(columns.slice().sort(), `${prefix}${table}`).toEqual(onPostgres.sort());
        }
      } finally {
        db.close();
      }
    }
  });

  it('copies the journal alone when returns.sqlite and inbox.sqlite are absent, and says so', async () => {
    const journal = SqliteJournal.open(join(stateDir, 'journal.sqlite'), { clock, log: silentLogger() });
    await toDone(journal, (await claimedFile(journal, 'only.pdf')).id);
    await journal.close();
    const url = await testDatabase();
    const result = await copy(url);
    expect(result.stores.map((c) => c.name)).toEqual(['journal']);
    expect(result.absent).toEqual([
      { name: 'returns', file: sources().returns },
      { name: 'inbox', file: sources().inbox },
    ]);
    expect(await tablesOf(url)).toEqual([
      'agents',
      'cluster_tasks',
      'history',
      'inspections',
      'items',
      'schema_migrations',
    ]);
    // The agent creates them at its start, and its follower takes the journal's done job.
    const returns = track(await openReturnsStore(pgLocation(url), stateDir, clock));
    const { follower, feed } = await followerOn(pgLocation(url), returns, stateDir, clock);
    track(feed);
    expect(await follower.syncFeed()).toBe(1);
  });

  it('refuses a target that has only the return path’s tables, and changes nothing', async () => {
    await fillState(stateDir, clock);
    // An agent whose returns store was made there (a test run, a half-done move).
    const returnsOnly = await testDatabase();
    await (await openReturnsStore(pgLocation(returnsOnly), stateDir, clock)).close();
    const before = await tablesOf(returnsOnly);
    const refused = await failure(copy(returnsOnly));
    expect(refused.code).toBe('DOCEX_CLI_USAGE');
    expect(refused.message).toContain(
      `is not empty: it already has the returns store (schema version ${latestVersionOf(RETURNS_COMPONENT)})`,
    );
    expect(await tablesOf(returnsOnly)).toEqual(before);
    expect(before.every((t) => String(t).startsWith('returns_'))).toBe(true);

    // One inbox table with a row, whatever made it; refused although inbox.sqlite is absent.
    rmSync(join(stateDir, 'inbox.sqlite'));
    const inboxTable = await testDatabase();
    await sql(
      inboxTable,
      "CREATE TABLE inbox_webhook_seen (id text); INSERT INTO inbox_webhook_seen VALUES ('x')",
    );
    const again = await failure(copy(inboxTable));
    expect(again.code).toBe('DOCEX_CLI_USAGE');
    expect(again.message).toContain('its inbox_webhook_seen table already has rows');
    expect(await tablesOf(inboxTable)).toEqual(['inbox_webhook_seen']);
  });

  it('refuses a returns.sqlite or inbox.sqlite not at its current schema version', async () => {
    await fillState(stateDir, clock);
    const url = await testDatabase();
    const older = new Database(sources().returns);
    older.prepare('DELETE FROM schema_migrations WHERE version = ?').run(RETURNS_SCHEMA_VERSION);
    older.close();
    const refused = await failure(copy(url));
    expect(refused.code).toBe('DOCEX_RETURNS_STORE_VERSION');
    expect(refused.message).toContain(`has schema version ${RETURNS_SCHEMA_VERSION - 1}`);
    expect(refused.message).toContain(
      'start the agent once (it migrates returns.sqlite), stop it, then copy',
    );
    expect(await tablesOf(url)).toEqual([]);

    rmSync(sources().returns);
    const newer = new Database(sources().inbox);
    newer
      .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)')
      .run(INBOX_SCHEMA_VERSION + 1);
    newer.close();
    const upgrade = await failure(copy(url));
    expect(upgrade.code).toBe('DOCEX_INBOX_VERSION');
    expect(upgrade.message).toContain('upgrade the agent');
    expect(await tablesOf(url)).toEqual([]);
  });

  it('leaves the whole target empty, journal included, when the server refuses a row of the returns store', async () => {
    await fillState(stateDir, clock);
    const url = await testDatabase();
    // A row trigger on returns_events, put there by an event trigger as soon as the copy creates
    // the table (inside the copy's transaction, after the journal is copied).
    await sql(
      url,
      `CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.id = 'se_a2' THEN RAISE EXCEPTION 'the test refuses event %', NEW.id; END IF;
         RETURN NEW;
       END $$;
       CREATE FUNCTION arm() RETURNS event_trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() WHERE object_identity = 'public.returns_events') THEN
           EXECUTE 'CREATE TRIGGER refuse_event BEFORE INSERT ON returns_events FOR EACH ROW EXECUTE FUNCTION refuse_event()';
         END IF;
       END $$;
       CREATE EVENT TRIGGER arm ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION arm();`,
    );
    const seen: string[] = [];
    const refused = await failure(
      copy(url, {
        batchRows: 1,
        onProgress: (p) => {
          if (!seen.includes(p.table)) seen.push(p.table);
        },
      }),
    );
    expect(refused.code).toBe('DOCEX_JOURNAL_UNAVAILABLE');
    expect(refused.message).toContain('the test refuses event se_a2');
    // The journal was copied before, in the same transaction: gone with it.
    expect(seen.slice(0, 4)).toEqual(['items', 'history', 'inspections', 'returns_sources']);
    expect(await tablesOf(url)).toEqual([]);

    await sql(url, 'DROP EVENT TRIGGER arm');
    const result = await copy(url);
    expect(result.stores.map((c) => c.name)).toEqual(['journal', 'returns', 'inbox']);
  });
});

describe('journal copy of the return path without a server', () => {
  it('copies tables under their PostgreSQL names, and reads WITHOUT ROWID tables by their key', () => {
    expect(RETURNS_COPY.tables.map((t) => [t.from, t.table])).toEqual([
      ['sources', 'returns_sources'],
      ['jobs', 'returns_jobs'],
      ['events', 'returns_events'],
      ['documents', 'returns_documents'],
      ['csv_days', 'returns_csv_days'],
      ['meta', 'returns_meta'],
    ]);
    expect(INBOX_COPY.tables.map((t) => [t.from, t.table, t.key])).toEqual([
      ['peppol_saved', 'inbox_peppol_saved', 'id'],
      ['meta', 'inbox_meta', 'key'],
      ['webhook_seen', 'inbox_webhook_seen', 'id'],
    ]);
    expect([RETURNS_COPY.lockKey, INBOX_COPY.lockKey]).toEqual([
      RETURNS_COMPONENT.lockKey,
      INBOX_COMPONENT.lockKey,
    ]);
  });
});
