/**
 * PostgresJournal and PostgresJournalReader on a real PostgreSQL server (test/support/postgres.ts:
 * a fresh database per test): the schema and its versions, claims, rows, every move the rules
 * allow or refuse, the retry and lost-answer counters, the upload URL, pruning, the read API, and
 * what several callers (or agents) at once must not break. The same walks run on a SQLite journal
 * must record the same items and history, key for key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocexError, isDocexError } from '../../src/core/errors.js';
import { describeLocation } from '../../src/journal/location.js';
import { journalFailure } from '../../src/journal/postgres/errors.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import {
  journalTypeParsers,
  poolConfig,
  postgresConnection,
  serverTarget,
  sslOptions,
} from '../../src/journal/postgres/pool.js';
import { PostgresJournalReader } from '../../src/journal/postgres/reader.js';
import { LOCK_SPACE, PG_SCHEMA_VERSION } from '../../src/journal/postgres/schema.js';
import { STATEMENTS as S } from '../../src/journal/postgres/statements.js';
import { pruneJournal } from '../../src/journal/prune.js';
import type { JournalItem } from '../../src/journal/schema.js';
import { SCHEMA_VERSION } from '../../src/journal/schema.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { checkTransition, ITEM_STATES, type ItemMode, type ItemState } from '../../src/journal/states.js';
import type {
  ClaimInput,
  HistoryEntry,
  RecordedClaim,
  RowInput,
  TransitionFields,
} from '../../src/journal/types.js';
import { freePort } from '../support/free-port.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  sha256,
  UPLOAD_URL,
} from './support/journal-harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PASSWORD = 'pw-S3cret-do-not-show';

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (err) {
    return isDocexError(err) ? err.code : `not a DocexError: ${String(err)}`;
  }
  return undefined;
}

describe('the PostgreSQL connection settings (no server)', () => {
  it('takes host, port, user and database from the URL, the password from beside it', () => {
    const connection = postgresConnection('postgres://docex%20agent@db.example:6543/journal%2Dprod', {
      password: PASSWORD,
      poolSize: 7,
      timeoutMs: 4_000,
    });
    expect(serverTarget(connection)).toEqual({
      host: 'db.example',
      port: 6543,
      user: 'docex agent',
      database: 'journal-prod',
      password: PASSWORD,
    });
    const config = poolConfig(connection);
    expect(config).toMatchObject({
      host: 'db.example',
      port: 6543,
      max: 7,
      connectionTimeoutMillis: 4_000,
      statement_timeout: 4_000,
      application_name: 'docex-agent',
      ssl: false,
      options: '-c synchronous_commit=on -c default_transaction_isolation=read\\ committed',
    });
    expect(config.query_timeout).toBeGreaterThan(4_000);
    expect(poolConfig(connection, { readOnly: true, max: 2 })).toMatchObject({
      max: 2,
      options: '-c default_transaction_read_only=on',
    });
    expect(describeLocation({ kind: 'postgres', connection })).not.toContain(PASSWORD);
    expect(serverTarget(postgresConnection('postgres://u@[::1]/d')).host).toBe('::1');
    expect(serverTarget(postgresConnection('postgresql:///d?host=/run/postgresql')).host).toBe(
      '/run/postgresql',
    );
  });

  it('refuses a URL parameter that would override the TLS or timeout settings, and a non-postgres URL', () => {
    const refused = (url: string) => {
      try {
        serverTarget(postgresConnection(url));
      } catch (err) {
        return isDocexError(err, 'DOCEX_CONFIG_INVALID') ? err.message : String(err);
      }
      return 'accepted';
    };
    expect(refused('postgres://u@h/d?sslmode=disable')).toContain('sslmode');
    expect(refused('mysql://u@h/d')).toContain('postgres://');
    expect(refused('not a url')).toContain('cannot be read');
  });

  it("maps libpq's sslmode to Node's TLS options", () => {
    const pem = { ca: 'CA-PEM', cert: 'CERT-PEM', key: 'KEY-PEM' };
    expect(sslOptions(undefined)).toBe(false);
    expect(sslOptions({ mode: 'disable', ...pem })).toBe(false);
    expect(sslOptions({ mode: 'require', ...pem })).toEqual({
      cert: 'CERT-PEM',
      key: 'KEY-PEM',
      rejectUnauthorized: false,
    });
    const verifyCa = sslOptions({ mode: 'verify-ca', ...pem }) as ConnectionOptions;
    expect(verifyCa).toMatchObject({
      ca: 'CA-PEM',
      cert: 'CERT-PEM',
      key: 'KEY-PEM',
      rejectUnauthorized: true,
    });
    // The chain is checked, the name is not: any host passes the identity check.
    expect(verifyCa.checkServerIdentity!('other.host', {} as never)).toBeUndefined();
    const full = sslOptions({ mode: 'verify-full', ca: 'CA-PEM' });
    expect(full).toEqual({ ca: 'CA-PEM', rejectUnauthorized: true });
  });

  it('parses BIGINT and BIGINT[] as numbers on its own parsers, leaving pg.types alone', () => {
    const types = journalTypeParsers();
    expect(types.getTypeParser(20, 'text')('1763722800000')).toBe(1_763_722_800_000);
    const parserOf = types.getTypeParser.bind(types) as (
      oid: number,
      format: 'text',
    ) => (text: string) => unknown;
    const parseArray = parserOf(1016, 'text');
    expect(parseArray('{1,NULL,3}')).toEqual([1, null, 3]);
    expect(() => types.getTypeParser(20, 'text')('9223372036854775807')).toThrow(RangeError);
    expect(pg.types.getTypeParser(20, 'text')('42')).toBe('42');
  });

  it('wraps a pg error without the password or a URL query, with its SQLSTATE', () => {
    const raw = Object.assign(new Error(`bad value ${PASSWORD} near ${UPLOAD_URL}`), { code: '22P02' });
    const err = journalFailure(raw, {
      location: 'postgres://docex@db:5432/j',
      doing: 'transition',
      secrets: [PASSWORD],
    });
    expect(err).toBeInstanceOf(DocexError);
    expect(err.code).toBe('DOCEX_INTERNAL');
    expect(err.message).toContain('postgres://docex@db:5432/j');
    expect(err.message).toContain('SQLSTATE 22P02');
    expect(err.message).not.toContain(PASSWORD);
    expect(err.message).not.toContain('SIGNATURE');
    expect(err.cause).toBeUndefined();
    const refused = Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' });
    const unavailable = journalFailure(refused, { location: 'x', doing: 'connect', secrets: [] });
    expect(unavailable.code).toBe('DOCEX_JOURNAL_UNAVAILABLE');
    expect(unavailable.message).toContain('ECONNREFUSED');
  });
});

describePostgres('PostgresJournal on a real PostgreSQL server', () => {
  let h: JournalHarness;
  let url: string;
  const opened: { close(): Promise<void> }[] = [];
  const clients: pg.Client[] = [];

  beforeEach(async () => {
    h = journalHarness();
    url = await testDatabase();
  });
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close();
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    h.cleanup();
  });

  async function open(connectionUrl = url): Promise<PostgresJournal> {
    const journal = await PostgresJournal.open(postgresConnection(connectionUrl, { poolSize: 6 }), {
      clock: h.clock,
      log: h.log,
    });
    opened.push(journal);
    return journal;
  }

  async function openReader(): Promise<PostgresJournalReader> {
    const reader = await PostgresJournalReader.open(postgresConnection(url));
    opened.push(reader);
    return reader;
  }

  /** A plain client of the test's database, for what the journal API does not do. */
  async function sql(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  }

  async function claimed(
    journal: PostgresJournal,
    overrides: Partial<ClaimInput> = {},
  ): Promise<JournalItem> {
    const result = await journal.recordClaim(claimInput(overrides));
    if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
    return result.item;
  }

  const createdFields = (jobId: string): TransitionFields => ({
    jobId,
    uploadUrl: UPLOAD_URL,
    uploadDeadline: h.clock.now() + 2 * HOUR,
  });

  describe('schema', () => {
    it('finds the unfinished items through items_state, not by reading a year of finished ones', async () => {
      await open();
      const client = await sql();
      // Whether the index can serve it at all (NOT IN cannot: an index scan of every id, filtered).
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query(`EXPLAIN ${S.unfinished.text}`);
      const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      expect(plan).toContain('items_state');
      expect(plan).not.toContain('Filter');
    });

    it('migrates an empty database to the version SQLite has plus the cluster tables and leases, and again finds nothing to do', async () => {
      // Migrations 4 (agents, cluster_tasks) and 5 (leases) have no SQLite twin: one agent per SQLite
      // journal. 6 (an item's managed company) is SQLite's 4, 7 (its relative path) SQLite's 5.
      expect(PG_SCHEMA_VERSION).toBe(SCHEMA_VERSION + 2);
      await open();
      const client = await sql();
      const versions = await client.query(
        'SELECT version, applied_at FROM schema_migrations ORDER BY version',
      );
      expect(versions.rows).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((v) => ({ version: v, applied_at: String(h.clock.now()) })),
      );
      const tables = await client.query(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
      );
      expect(tables.rows.map((r) => r.tablename)).toEqual([
        'agents',
        'cluster_tasks',
        'history',
        'inspections',
        'items',
        'schema_migrations',
      ]);
      h.clock.advance(1_000);
      await open();
      expect((await client.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n).toBe(7);
      expect(h.logText()).toMatch(/"migrated":\[1,2,3,4,5,6,7\]/);
      expect(h.logText()).toMatch(/"migrated":\[\]/);
    });

    it('migrates once when several agents start on an empty database at the same moment', async () => {
      await Promise.all(Array.from({ length: 5 }, () => open()));
      const client = await sql();
      expect((await client.query('SELECT version FROM schema_migrations ORDER BY 1')).rows).toEqual([
        { version: 1 },
        { version: 2 },
        { version: 3 },
        { version: 4 },
        { version: 5 },
        { version: 6 },
        { version: 7 },
      ]);
    });

    it('refuses a database written by a newer agent (DOCEX_JOURNAL_VERSION), the reader too', async () => {
      const journal = await open();
      await claimed(journal);
      const client = await sql();
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)');
      const err = await PostgresJournal.open(postgresConnection(url), { clock: h.clock, log: h.log }).catch(
        (e: unknown) => e,
      );
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      expect((err as Error).message).toBe(
        `the journal has schema version 99; this agent knows up to ${PG_SCHEMA_VERSION}: upgrade the agent`,
      );
      expect(await codeOf(PostgresJournalReader.open(postgresConnection(url)))).toBe('DOCEX_JOURNAL_VERSION');
      // Nothing was changed by the refusal.
      expect((await client.query('SELECT count(*)::int AS n FROM items')).rows[0].n).toBe(1);
    });

    it('has the reader refuse a database without a journal rather than create one', async () => {
      expect(await codeOf(PostgresJournalReader.open(postgresConnection(url)))).toBe(
        'DOCEX_JOURNAL_UNAVAILABLE',
      );
      const client = await sql();
      expect((await client.query("SELECT to_regclass('items') AS t")).rows[0].t).toBeNull();
    });

    it('keeps a fractional mtime and epoch-ms BIGINTs exactly', async () => {
      const journal = await open();
      const item = await claimed(journal, { mtimeMs: 1_763_700_000_123.25, size: 2 ** 40 });
      expect(await journal.get(item.id)).toMatchObject({
        mtimeMs: 1_763_700_000_123.25,
        size: 2 ** 40,
        createdAt: h.clock.now(),
      });
    });
  });

  describe('claims', () => {
    it('records the claim with its history entry, stamped by the injected clock', async () => {
      const journal = await open();
      const item = await claimed(journal);
      expect(item).toMatchObject({
        kind: 'file',
        state: 'claimed',
        folder: 'invoices',
        fileName: 'invoice-2026-0001.pdf',
        size: 1234,
        mtimeMs: 1_763_700_000_000,
        workflowId: 'wf-pdf-email',
        mode: 'single-file',
        attempt: 0,
        allowDuplicates: false,
        hasUploadUrl: false,
        createdAt: h.clock.now(),
        updatedAt: h.clock.now(),
        failedTries: 0,
        lostAnswers: 0,
        orphanJobs: 0,
      });
      expect(await journal.history(item.id)).toEqual([
        {
          itemId: item.id,
          from: undefined,
          to: 'claimed',
          at: h.clock.now(),
          detail: { size: 1234, sha256: item.sha256 },
        },
      ]);
    });

    it('answers in-progress for the same file still claimed, duplicate for the same content elsewhere', async () => {
      const journal = await open();
      const first = await claimed(journal);
      const again = await journal.recordClaim(claimInput());
      expect(again).toEqual({ kind: 'in-progress', item: first });

      const copy = await journal.recordClaim(
        claimInput({ sourcePath: '/srv/erp/in/copy/invoice-2026-0001.pdf' }),
      );
      expect(copy.kind).toBe('duplicate');
      if (copy.kind !== 'duplicate') return;
      expect(copy.earlier.id).toBe(first.id);
      expect(copy.item).toMatchObject({
        state: 'rejected',
        rejectCode: 'DOCEX_DUPLICATE',
        duplicateOf: first.id,
      });
      expect(copy.item.rejectReason).toContain('already taken as invoice-2026-0001.pdf');
      expect(await journal.history(copy.item.id)).toEqual([
        {
          itemId: copy.item.id,
          from: undefined,
          to: 'rejected',
          at: h.clock.now(),
          detail: { code: 'DOCEX_DUPLICATE', duplicateOf: first.id },
        },
      ]);

      // Once past claimed, the same file at its source path is a new drop (here: a duplicate).
      await journal.transition(first.id, 'validated');
      expect((await journal.recordClaim(claimInput())).kind).toBe('duplicate');
      // The same workflow in another folder is a duplicate too; another workflow and folder is not.
      expect((await journal.recordClaim(claimInput({ folder: 'other', sourcePath: '/o/1' }))).kind).toBe(
        'duplicate',
      );
      expect(
        (await journal.recordClaim(claimInput({ folder: 'other', workflowId: 'wf-2', sourcePath: '/o/2' })))
          .kind,
      ).toBe('claimed');
      // allowDuplicates lets it through; an earlier drop that was rejected does not count.
      expect(
        (await journal.recordClaim(claimInput({ allowDuplicates: true, sourcePath: '/a/1' }))).kind,
      ).toBe('claimed');
      const refused = await claimed(journal, { fileName: 'refused.pdf' });
      await journal.transition(refused.id, 'rejected', { code: 'DOCEX_INPUT_EMPTY' });
      expect(
        (await journal.recordClaim(claimInput({ fileName: 'refused.pdf', sourcePath: '/r/2' }))).kind,
      ).toBe('claimed');
    });

    it('records a claim that passed its checks as validated with its intent, in one transaction', async () => {
      const journal = await open();
      const item = await claimed(journal, { validatedNote: 'checked: PDF, 1 page' });
      expect(item).toMatchObject({ state: 'creating', attempt: 1 });
      expect((await journal.history(item.id)).map((e) => [e.from, e.to, e.detail?.['note']])).toEqual([
        [undefined, 'claimed', undefined],
        ['claimed', 'validated', 'checked: PDF, 1 page'],
        ['validated', 'creating', undefined],
      ]);
    });

    it('claims the same content exactly once when 20 claims race, from two agents', async () => {
      const agents = [await open(), await open()];
      const content = sha256('the same bytes');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          agents[i % 2]!.recordClaim(claimInput({ fileName: `copy-${i}.pdf`, sha256: content })),
        ),
      );
      const winners = results.filter((r) => r.kind === 'claimed');
      const duplicates = results.filter(
        (r): r is Extract<RecordedClaim, { kind: 'duplicate' }> => r.kind === 'duplicate',
      );
      expect(winners).toHaveLength(1);
      expect(duplicates).toHaveLength(19);
      for (const d of duplicates) expect(d.earlier.id).toBe(winners[0]!.item.id);
      expect((await agents[0]!.stats()).files).toMatchObject({ claimed: 1, rejected: 19 });
    });
  });

  describe('payload rows', () => {
    it('records all rows in one go, each validated or rejected, with a history entry each', async () => {
      const journal = await open();
      const file = await claimed(journal, { fileName: 'batch.csv', mode: 'payload-word' });
      await journal.transition(file.id, 'validated');
      const rows = await journal.addRows(file.id, [
        { rowIndex: 2, label: 'C-3', payloadSha256: sha256('r2') },
        { rowIndex: 0, label: 'C-1' },
        { rowIndex: 1, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: `see ${UPLOAD_URL}` } },
      ]);
      expect(rows.map((r) => [r.rowIndex, r.state, r.label, r.kind, r.parentId])).toEqual([
        [2, 'validated', 'C-3', 'row', file.id],
        [0, 'validated', 'C-1', 'row', file.id],
        [1, 'rejected', undefined, 'row', file.id],
      ]);
      expect(rows[0]!.id).toBeLessThan(rows[1]!.id);
      expect(rows[0]).toMatchObject({ folder: 'invoices', sha256: file.sha256, payloadSha256: sha256('r2') });
      expect(rows[2]!.rejectReason).not.toContain('SIGNATURE');
      expect((await journal.rowsOf(file.id)).map((r) => r.rowIndex)).toEqual([0, 1, 2]);
      expect(await journal.history(rows[2]!.id)).toEqual([
        {
          itemId: rows[2]!.id,
          from: undefined,
          to: 'rejected',
          at: h.clock.now(),
          detail: { code: 'DOCEX_PAYLOAD_ROW_INVALID' },
        },
      ]);
      expect((await journal.history(rows[0]!.id))[0]!.detail).toEqual({ rowIndex: 2 });
    });

    it('refuses rows twice, none, on a file not validated, a bad or repeated index, an unknown item', async () => {
      const journal = await open();
      const file = await claimed(journal, { mode: 'payload-word' });
      expect(await codeOf(journal.addRows(file.id, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_ROWS');
      await journal.transition(file.id, 'validated');
      expect(await codeOf(journal.addRows(file.id, []))).toBe('DOCEX_JOURNAL_ROWS');
      expect(await codeOf(journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: -1 }]))).toBe(
        'DOCEX_JOURNAL_ROWS',
      );
      expect(await codeOf(journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 0 }]))).toBe(
        'DOCEX_JOURNAL_ROWS',
      );
      expect(await journal.rowsOf(file.id)).toEqual([]);
      await journal.addRows(file.id, [{ rowIndex: 0 }]);
      expect(await codeOf(journal.addRows(file.id, [{ rowIndex: 1 }]))).toBe('DOCEX_JOURNAL_ROWS');
      expect(await codeOf(journal.addRows(999_999, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
    });

    it('records a file of 100,000 rows in one transaction', async () => {
      const journal = await open();
      const file = await claimed(journal, { fileName: 'big.csv', mode: 'payload-word' });
      await journal.transition(file.id, 'validated');
      const input: RowInput[] = Array.from({ length: 100_000 }, (_, i) => ({ rowIndex: i, label: `L-${i}` }));
      const started = Date.now();
      const rows = await journal.addRows(file.id, input);
      const ms = Date.now() - started;
      expect(rows).toHaveLength(100_000);
      expect(rows[99_999]).toMatchObject({ rowIndex: 99_999, label: 'L-99999', state: 'validated' });
      expect((await journal.stats()).rows.validated).toBe(100_000);
      // One statement per table, not a round trip per row (generous for a loaded CI machine).
      expect(ms).toBeLessThan(15_000);
    }, 60_000);
  });

  describe('moves', () => {
    const FIELDS: TransitionFields = {
      jobId: 'job-any',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: Date.parse('2026-11-21T12:00:00.000Z'),
      md5: 'md5-any',
      code: 'DOCEX_REJECTED',
      reason: 'refused by the test',
    };
    /** The legal road of a single file (or a payload-word one) to each state. */
    const ROAD: Record<ItemState, ItemState[]> = {
      claimed: [],
      validated: ['validated'],
      creating: ['validated', 'creating'],
      created: ['validated', 'creating', 'created'],
      uploaded: ['validated', 'creating', 'created', 'uploaded'],
      done: ['validated', 'creating', 'created', 'uploaded', 'done'],
      rejected: ['rejected'],
    };

    for (const mode of ['single-file', 'payload-word'] as const satisfies readonly ItemMode[]) {
      it(`makes every legal move and refuses every illegal one (${mode}), as checkTransition says`, async () => {
        const journal = await open();
        let n = 0;
        for (const from of ITEM_STATES) {
          const road = mode === 'payload-word' ? ROAD[from].filter((s) => s !== 'uploaded') : ROAD[from];
          if (mode === 'payload-word' && from === 'uploaded') continue;
          for (const to of ITEM_STATES) {
            const item = await claimed(journal, { fileName: `m-${n++}.pdf`, mode });
            for (const step of road) await journal.transition(item.id, step, FIELDS);
            const before = (await journal.get(item.id))!;
            expect(before.state).toBe(from);
            const legal = checkTransition({ kind: 'file', mode, state: from }, to).ok;
            h.clock.advance(10);
            const moving = journal.transition(item.id, to, FIELDS);
            if (legal) {
              expect((await moving).state, `${from} -> ${to}`).toBe(to);
              const last = (await journal.history(item.id)).at(-1)!;
              expect([last.from, last.to, last.at]).toEqual([from, to, h.clock.now()]);
            } else {
              expect(await codeOf(moving), `${from} -> ${to}`).toBe('DOCEX_JOURNAL_TRANSITION');
              expect(await journal.get(item.id)).toEqual(before);
              expect(await journal.history(item.id)).toHaveLength(road.length + 1);
            }
          }
        }
      });
    }

    it('refuses a move without its fields (DOCEX_JOURNAL_FIELDS) and an unknown item, changing nothing', async () => {
      const journal = await open();
      const item = await claimed(journal);
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      expect(await codeOf(journal.transition(item.id, 'created', { jobId: 'job-1' }))).toBe(
        'DOCEX_JOURNAL_FIELDS',
      );
      expect(await codeOf(journal.transition(item.id, 'rejected'))).toBe('DOCEX_JOURNAL_FIELDS');
      expect((await journal.get(item.id))!.state).toBe('creating');
      expect(await journal.history(item.id)).toHaveLength(3);
      expect(await codeOf(journal.transition(424_242, 'validated'))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
    });

    it('walks a recreate: the attempt counts up, the job name changes, the old job id is recorded', async () => {
      const journal = await open();
      const item = await claimed(journal);
      await journal.transition(item.id, 'validated');
      const first = await journal.transition(item.id, 'creating');
      await journal.transition(item.id, 'created', createdFields('job-1'));
      const second = await journal.transition(item.id, 'creating', { note: 'window over' });
      expect(second).toMatchObject({
        attempt: 2,
        jobId: undefined,
        hasUploadUrl: false,
        uploadDeadline: undefined,
      });
      expect(second.jobName).not.toBe(first.jobName);
      expect((await journal.history(item.id)).at(-1)!.detail).toEqual({
        note: 'window over',
        attempt: 2,
        jobName: second.jobName,
        previousJobId: 'job-1',
      });
    });

    it('finishes a file of rows only once every row is final', async () => {
      const journal = await open();
      const file = await claimed(journal, { fileName: 'rows.csv', mode: 'payload-word' });
      await journal.transition(file.id, 'validated');
      const [r0, r1] = await journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 1 }]);
      expect(await codeOf(journal.transition(file.id, 'creating'))).toBe('DOCEX_JOURNAL_TRANSITION');
      await journal.transition(r0!.id, 'creating');
      await journal.transition(r0!.id, 'created', { jobId: 'job-r0' });
      await journal.transition(r0!.id, 'done');
      expect(await codeOf(journal.transition(file.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
      await journal.transition(r1!.id, 'rejected', { code: 'DOCEX_REJECTED' });
      expect((await journal.transition(file.id, 'done')).state).toBe('done');
      expect(await codeOf(journal.transition(r0!.id, 'claimed'))).toBe('DOCEX_JOURNAL_TRANSITION');
    });

    it('counts lost create answers in the move itself, orphan jobs apart, and not on a refused move', async () => {
      const journal = await open();
      const item = await claimed(journal);
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      const orphan = await journal.transition(item.id, 'creating', {
        lostAnswer: 'orphan',
        note: 'orphan job',
      });
      expect(orphan).toMatchObject({ attempt: 2, lostAnswers: 1, orphanJobs: 1 });
      const kept = await journal.transition(item.id, 'created', {
        ...createdFields('job-2'),
        lostAnswer: 'kept',
      });
      expect(kept).toMatchObject({ lostAnswers: 2, orphanJobs: 1 });
      expect(await codeOf(journal.transition(item.id, 'validated', { lostAnswer: 'orphan' }))).toBe(
        'DOCEX_JOURNAL_TRANSITION',
      );
      expect(await journal.get(item.id)).toMatchObject({ lostAnswers: 2, orphanJobs: 1 });
      // The counters are not history detail.
      expect((await journal.history(item.id)).at(-1)!.detail).toEqual({
        jobId: 'job-2',
        uploadDeadline: new Date(kept.uploadDeadline!).toISOString(),
      });
    });

    it('records failed tries in a row and starts them again, without history entries', async () => {
      const journal = await open();
      const item = await claimed(journal);
      const t1 = h.clock.now() + 60_000;
      expect(await journal.recordFailedTry(item.id, { code: 'DOCEX_NETWORK', nextTryAt: t1 })).toMatchObject({
        failedTries: 1,
        nextTryAt: t1,
        lastFailureCode: 'DOCEX_NETWORK',
      });
      const second = await journal.recordFailedTry(item.id, { code: 'DOCEX_API_503', nextTryAt: t1 + 1 });
      expect(second).toMatchObject({ failedTries: 2, nextTryAt: t1 + 1, lastFailureCode: 'DOCEX_API_503' });
      await journal.clearFailedTries(item.id);
      expect(await journal.get(item.id)).toMatchObject({
        failedTries: 0,
        nextTryAt: undefined,
        lastFailureCode: 'DOCEX_API_503',
      });
      expect(await journal.history(item.id)).toHaveLength(1);
      expect(await codeOf(journal.recordFailedTry(777_777, { code: 'X', nextTryAt: 0 }))).toBe(
        'DOCEX_JOURNAL_UNKNOWN_ITEM',
      );
    });

    it('resolves commitMove and flush once the move is committed', async () => {
      const journal = await open();
      const item = await claimed(journal);
      const moving = journal.transition(item.id, 'validated');
      await journal.flush();
      expect(await moving).toMatchObject({ state: 'validated' });
      expect((await journal.commitMove(item.id, 'creating')).state).toBe('creating');
      expect((await journal.get(item.id))!.state).toBe('creating');
    });
  });

  describe('the upload URL', () => {
    it('is kept for the uploader, shown nowhere else, and dropped once the upload is confirmed', async () => {
      const journal = await open();
      const item = await claimed(journal);
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      const created = await journal.transition(item.id, 'created', {
        ...createdFields('job-1'),
        note: `created, upload to ${UPLOAD_URL}`,
      });
      expect(created.hasUploadUrl).toBe(true);
      expect(await journal.revealUploadUrl(item.id)).toBe(UPLOAD_URL);
      const everything = JSON.stringify([
        created,
        await journal.get(item.id),
        await journal.byJobId('job-1'),
        await journal.unfinished(),
        await journal.recoveryPlan(),
        await journal.history(item.id),
      ]);
      expect(everything).not.toContain('SIGNATURE');
      expect(everything).not.toContain('X-Sig');

      await journal.forgetUploadUrl(item.id);
      expect(await journal.revealUploadUrl(item.id)).toBeUndefined();
      expect((await journal.get(item.id))!.hasUploadUrl).toBe(false);

      const other = await claimed(journal, { fileName: 'other.pdf' });
      await journal.transition(other.id, 'validated');
      await journal.transition(other.id, 'creating');
      await journal.transition(other.id, 'created', createdFields('job-2'));
      expect((await journal.transition(other.id, 'uploaded', { md5: 'm' })).hasUploadUrl).toBe(false);
      expect(await journal.revealUploadUrl(other.id)).toBeUndefined();
      expect(await journal.revealUploadUrl(999)).toBeUndefined();

      expect(h.logText()).not.toContain('SIGNATURE');
      const client = await sql();
      const stored = await client.query('SELECT detail::text AS d FROM history');
      expect(JSON.stringify(stored.rows)).not.toContain('SIGNATURE');
    });

    it('answers the URL of the create it just recorded once from memory, then from the database', async () => {
      const journal = await open();
      const item = await claimed(journal, { validatedNote: 'pdf' });
      await journal.transition(item.id, 'created', createdFields('job-1'));
      // Changed behind the journal's back: the first answer does not read it, the next one does.
      const later = `${UPLOAD_URL}&again=1`;
      await (await sql()).query('UPDATE items SET upload_url = $1 WHERE id = $2', [later, item.id]);
      expect(await journal.revealUploadUrl(item.id)).toBe(UPLOAD_URL);
      expect(await journal.revealUploadUrl(item.id)).toBe(later);
    });
  });

  describe('reads', () => {
    it('looks up by path, job id, recent and unfinished; counts; plans recovery with the rows of a file', async () => {
      const journal = await open();
      const a = await claimed(journal, { fileName: 'a.pdf' });
      h.clock.advance(1_000);
      const b = await claimed(journal, { fileName: 'b.csv', mode: 'payload-word' });
      await journal.transition(b.id, 'validated');
      const [row] = await journal.addRows(b.id, [{ rowIndex: 0 }]);
      expect((await journal.byPath(a.sourcePath!)).map((i) => i.id)).toEqual([a.id]);
      expect((await journal.byPath(a.claimedPath!)).map((i) => i.id)).toEqual([a.id]);
      await journal.transition(a.id, 'validated');
      await journal.transition(a.id, 'creating');
      h.clock.advance(1_000);
      await journal.transition(a.id, 'created', createdFields('job-a'));
      expect((await journal.byJobId('job-a'))!.id).toBe(a.id);
      expect(await journal.byJobId('job-none')).toBeUndefined();
      expect((await journal.recent(1)).map((i) => i.id)).toEqual([a.id]);
      expect((await journal.unfinished()).map((i) => i.id)).toEqual([a.id, b.id, row!.id]);
      const stats = await journal.stats();
      expect(stats.files).toMatchObject({ created: 1, validated: 1, done: 0 });
      expect(stats.rows).toMatchObject({ validated: 1 });
      expect(stats.unfinished).toBe(3);
      const plan = await journal.recoveryPlan();
      expect(plan.map((s) => [s.item.id, s.action.kind])).toEqual([
        [a.id, 'upload'],
        [b.id, 'resume-rows'],
        [row!.id, 'create'],
      ]);
      expect(await journal.get(123_456)).toBeUndefined();
    });

    it('counts inspections a crash interrupted', async () => {
      const journal = await open();
      expect(await journal.interruptedInspections('/x/a.pdf')).toBe(0);
      await journal.inspectionStarting('/x/a.pdf');
      expect(await journal.interruptedInspections('/x/a.pdf')).toBe(1);
      await journal.inspectionStarting('/x/a.pdf');
      expect(await journal.interruptedInspections('/x/a.pdf')).toBe(2);
      await journal.inspectionEnded('/x/a.pdf');
      expect(await journal.interruptedInspections('/x/a.pdf')).toBe(0);
    });
  });

  describe('pruning', () => {
    async function submit(journal: PostgresJournal, fileName: string): Promise<number> {
      const item = await claimed(journal, { fileName });
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      await journal.transition(item.id, 'created', createdFields(`job-${item.id}`));
      await journal.transition(item.id, 'uploaded', { md5: 'm' });
      await journal.transition(item.id, 'done');
      return item.id;
    }

    it('keeps a slim row of a done file (its history and rows go), removes a rejected one, spares the recent', async () => {
      const journal = await open();
      const done = await submit(journal, 'done.pdf');
      const payload = await claimed(journal, { fileName: 'rows.csv', mode: 'payload-word' });
      await journal.transition(payload.id, 'validated');
      const rows = await journal.addRows(payload.id, [{ rowIndex: 0 }, { rowIndex: 1 }]);
      for (const r of rows) {
        await journal.transition(r.id, 'creating');
        await journal.transition(r.id, 'created', { jobId: `job-row-${r.id}` });
        await journal.transition(r.id, 'done');
      }
      await journal.transition(payload.id, 'done');
      const refused = await claimed(journal, { fileName: 'refused.pdf' });
      await journal.transition(refused.id, 'rejected', { code: 'DOCEX_INPUT_EMPTY' });
      const open_ = await claimed(journal, { fileName: 'open.pdf' });
      h.clock.advance(100 * DAY);
      const recent = await submit(journal, 'recent.pdf');

      const totals = await pruneJournal(journal, h.clock.now() - 90 * DAY, { scanIds: 3 });
      // done.pdf 6 entries; rows.csv 3 of its own and 4 per row; refused.pdf 2.
      expect(totals).toMatchObject({ items: 3, rows: 2, history: 6 + 3 + 2 * 4 + 2 });
      expect(totals.batches).toBeGreaterThan(1);
      expect(await journal.history(done)).toEqual([]);
      expect(await journal.get(done)).toMatchObject({ state: 'done', jobId: `job-${done}` });
      expect(await journal.rowsOf(payload.id)).toEqual([]);
      expect(await journal.get(refused.id)).toBeUndefined();
      expect(await journal.get(open_.id)).toMatchObject({ state: 'claimed' });
      expect(await journal.history(recent)).toHaveLength(6);
      // The done file still makes a re-drop a duplicate.
      expect(
        (await journal.recordClaim(claimInput({ fileName: 'done.pdf', sourcePath: '/again' }))).kind,
      ).toBe('duplicate');
      // A second pass finds nothing left to prune.
      expect(await pruneJournal(journal, h.clock.now() - 90 * DAY)).toMatchObject({
        items: 0,
        rows: 0,
        history: 0,
      });
    });

    it('answers the next id to scan, and none past the last item', async () => {
      const journal = await open();
      for (let i = 0; i < 5; i++) await claimed(journal, { fileName: `f${i}.pdf` });
      expect(await journal.pruneFinished(h.clock.now(), 0, 2)).toEqual({
        items: 0,
        rows: 0,
        history: 0,
        next: 2,
      });
      expect((await journal.pruneFinished(h.clock.now(), 4, 2)).next).toBeUndefined();
    });
  });

  describe('the same record as SQLite', () => {
    let sqliteDir: string;
    beforeEach(() => {
      sqliteDir = mkdtempSync(join(tmpdir(), 'docex-pg-vs-sqlite-'));
    });
    afterEach(() => rmSync(sqliteDir, { recursive: true, force: true }));

    /** What both journals answer; SQLite's synchronously. */
    interface Walkable {
      recordClaim(input: ClaimInput): RecordedClaim | Promise<RecordedClaim>;
      addRows(fileId: number, rows: readonly RowInput[]): JournalItem[] | Promise<JournalItem[]>;
      transition(id: number, to: ItemState, fields?: TransitionFields): JournalItem | Promise<JournalItem>;
      get(id: number): JournalItem | undefined | Promise<JournalItem | undefined>;
      history(id: number): HistoryEntry[] | Promise<HistoryEntry[]>;
    }

    async function walk(j: Walkable): Promise<{ items: unknown[]; history: unknown[] }> {
      const claim = async (overrides: Partial<ClaimInput>) =>
        (await j.recordClaim(claimInput(overrides))).item.id;
      const single = await claim({ mtimeMs: 1_763_700_000_000.25 });
      await j.transition(single, 'validated', { note: `looked at ${UPLOAD_URL}` });
      await j.transition(single, 'creating');
      h.clock.advance(500);
      await j.transition(single, 'created', createdFields('job-s1'));
      await j.transition(single, 'creating', { note: 'expired' });
      await j.transition(single, 'created', createdFields('job-s2'));
      await j.transition(single, 'uploaded', { md5: 'md5-s' });
      await j.transition(single, 'done');
      await claim({ sourcePath: '/copy/invoice-2026-0001.pdf' });
      const fast = await claim({ fileName: 'fast.pdf', validatedNote: 'ok' });
      await j.transition(fast, 'rejected', { code: 'DOCEX_REJECTED', reason: `no: ${UPLOAD_URL}` });
      const batch = await claim({ fileName: 'rows.csv', mode: 'payload-word', allowDuplicates: true });
      await j.transition(batch, 'validated');
      const rows = await j.addRows(batch, [
        { rowIndex: 0, label: 'A' },
        { rowIndex: 1, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'bad' } },
      ]);
      await j.transition(rows[0]!.id, 'creating');
      await j.transition(rows[0]!.id, 'created', { jobId: 'job-r0' });
      await j.transition(rows[0]!.id, 'done', { note: 'found' });
      await j.transition(batch, 'done');
      const items: unknown[] = [];
      const history: unknown[] = [];
      for (let id = 1; id <= rows[1]!.id; id++) {
        items.push(await j.get(id));
        history.push(await j.history(id));
      }
      return { items, history };
    }

    it('records the same items and history details for the same walk', async () => {
      const start = h.clock.now();
      const sqlite = SqliteJournal.open(join(sqliteDir, 'journal.db'), { clock: h.clock, log: h.log });
      let expected: Awaited<ReturnType<typeof walk>>;
      try {
        expected = await walk(sqlite);
      } finally {
        await sqlite.close();
      }
      h.clock.set(start);
      const actual = await walk(await open());
      expect(actual.items).toEqual(expected.items);
      expect(actual.history).toEqual(expected.history);
      expect(JSON.stringify(actual.history)).toBe(JSON.stringify(expected.history));
    });
  });

  describe('the reader', () => {
    it('connects read-only: its sessions cannot write', async () => {
      await open();
      const pool = new pg.Pool(poolConfig(postgresConnection(url), { readOnly: true, max: 1 }));
      try {
        const err = await pool.query('DELETE FROM items').catch((e: unknown) => e);
        expect((err as { code?: string }).code).toBe('25006');
      } finally {
        await pool.end();
      }
    });

    it('feeds done jobs in the order their done was recorded, a row with its file as source', async () => {
      const journal = await open();
      const first = await claimed(journal, { fileName: 'first.docx', mode: 'payload-word' });
      const batch = await claimed(journal, { fileName: 'batch.csv', mode: 'payload-word' });
      await journal.transition(batch.id, 'validated');
      const [row0, row1] = await journal.addRows(batch.id, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
      const doneWithJob = async (id: number, jobId: string, validated: boolean) => {
        if (!validated) await journal.transition(id, 'validated');
        await journal.transition(id, 'creating');
        await journal.transition(id, 'created', { jobId });
        await journal.transition(id, 'done');
      };
      h.clock.advance(1_000);
      await doneWithJob(row1!.id, 'job-row1', true);
      await doneWithJob(first.id, 'job-first', false);
      await doneWithJob(row0!.id, 'job-row0', true);
      await journal.transition(batch.id, 'done');

      const reader = await openReader();
      const done = await reader.doneJobsAfter(0, 10);
      expect(done.map((d) => d.jobId)).toEqual(['job-row1', 'job-first', 'job-row0']);
      expect(done[2]).toMatchObject({
        itemId: row0!.id,
        rowIndex: 0,
        label: 'C-1',
        jobName: (await journal.get(row0!.id))!.jobName,
        doneAt: h.clock.now(),
        source: {
          itemId: batch.id,
          folder: 'invoices',
          fileName: 'batch.csv',
          sha256: batch.sha256,
          claimedAt: batch.createdAt,
        },
      });
      expect(done[1]).toMatchObject({ rowIndex: undefined, label: undefined, source: { itemId: first.id } });
      expect((await reader.doneJobsAfter(done[0]!.cursor, 10)).map((d) => d.jobId)).toEqual([
        'job-first',
        'job-row0',
      ]);
      expect(await reader.doneJobsAfter(done[2]!.cursor, 10)).toEqual([]);
      expect((await reader.doneJobsAfter(0, 1)).map((d) => d.jobId)).toEqual(['job-row1']);

      const steps = await reader.historyAfter(0, 3);
      expect(steps.map((s) => [s.from, s.to, s.kind, s.folder])).toEqual([
        [undefined, 'claimed', 'file', 'invoices'],
        [undefined, 'claimed', 'file', 'invoices'],
        ['claimed', 'validated', 'file', 'invoices'],
      ]);
      expect((await reader.historyAfter(steps[2]!.id, 1000)).length).toBeGreaterThan(10);
      expect(await reader.get(row0!.id)).toEqual(await journal.get(row0!.id));
      expect(await reader.byJobId('job-first')).toEqual(await journal.get(first.id));
      expect(await reader.byPath(first.sourcePath!)).toEqual([await journal.get(first.id)]);
      expect(await reader.history(first.id)).toEqual(await journal.history(first.id));
    });

    it('never passes a history entry that commits after a later one (the horizon)', async () => {
      const journal = await open();
      const reader = await openReader();
      const late = await claimed(journal, { fileName: 'late.docx', mode: 'payload-word' });
      const early = await claimed(journal, { fileName: 'early.docx', mode: 'payload-word' });
      for (const [id, jobId] of [
        [late.id, 'job-late'],
        [early.id, 'job-early'],
      ] as const) {
        await journal.transition(id, 'validated');
        await journal.transition(id, 'creating');
        await journal.transition(id, 'created', { jobId });
      }
      // The done entry of `late` takes its id, then its transaction stalls for a second before committing.
      const client = await sql();
      await client.query(`
        CREATE FUNCTION slow_done() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.to_state = 'done' AND NEW.item_id = ${late.id} THEN PERFORM pg_sleep(1); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER slow_done AFTER INSERT ON history FOR EACH ROW EXECUTE FUNCTION slow_done();`);
      const lateDone = journal.transition(late.id, 'done');
      for (;;) {
        const held = await client.query(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND mode = 'ShareLock' AND granted",
          [LOCK_SPACE.history],
        );
        if (held.rows[0].n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await journal.transition(early.id, 'done');
      // While `late` has not committed, the feed gives nothing past it: both, in order, or nothing.
      const during = (await reader.doneJobsAfter(0, 10)).map((d) => d.jobId);
      expect([[], ['job-late', 'job-early']]).toContainEqual(during);
      await lateDone;
      const feed = await reader.doneJobsAfter(0, 10);
      expect(feed.map((d) => d.jobId)).toEqual(['job-late', 'job-early']);
      expect(feed[0]!.cursor).toBeLessThan(feed[1]!.cursor);
    });

    it('lists pending uploads, waiting files, old unfinished files and file ids by name or content', async () => {
      const journal = await open();
      const a = await claimed(journal, { fileName: 'a.pdf' });
      await journal.transition(a.id, 'validated');
      await journal.transition(a.id, 'creating');
      h.clock.advance(1_000);
      const openedAt = h.clock.now();
      await journal.transition(a.id, 'created', {
        ...createdFields('job-a'),
        uploadDeadline: openedAt + HOUR,
      });
      const b = await claimed(journal, { fileName: 'b.pdf', folder: 'orders', workflowId: 'wf-orders' });
      await journal.transition(b.id, 'validated');
      await journal.transition(b.id, 'creating');
      await journal.transition(b.id, 'created', { ...createdFields('job-b'), uploadDeadline: openedAt + 10 });
      const word = await claimed(journal, { fileName: 'w.docx', mode: 'payload-word' });
      await journal.transition(word.id, 'validated');
      await journal.transition(word.id, 'creating');
      await journal.transition(word.id, 'created', { jobId: 'job-w' });
      h.clock.advance(1_000);
      const c = await claimed(journal, { fileName: 'c.pdf' });
      const refused = await claimed(journal, { fileName: 'r.pdf' });
      await journal.transition(refused.id, 'rejected', { code: 'DOCEX_INPUT_EMPTY' });

      const reader = await openReader();
      expect(await reader.pendingUploads()).toEqual([
        { itemId: b.id, folder: 'orders', fileName: 'b.pdf', openedAt, deadline: openedAt + 10 },
        { itemId: a.id, folder: 'invoices', fileName: 'a.pdf', openedAt, deadline: openedAt + HOUR },
      ]);
      expect(await reader.waiting()).toEqual([
        { folder: 'invoices', state: 'claimed', count: 1, oldestAt: c.createdAt },
        { folder: 'invoices', state: 'created', count: 2, oldestAt: a.createdAt },
        { folder: 'orders', state: 'created', count: 1, oldestAt: b.createdAt },
      ]);
      expect((await reader.unfinishedSince(c.createdAt - 1, 10)).map((f) => f.id)).toEqual([
        a.id,
        b.id,
        word.id,
      ]);
      expect(await reader.unfinishedSince(h.clock.now(), 1)).toEqual([
        {
          id: a.id,
          folder: 'invoices',
          fileName: 'a.pdf',
          state: 'created',
          claimedAt: a.createdAt,
          jobId: 'job-a',
        },
      ]);
      expect(await reader.fileItemIds({ fileName: 'a.pdf' }, 10)).toEqual([a.id]);
      const copy = await journal.recordClaim(claimInput({ fileName: 'a.pdf', sourcePath: '/copy/a.pdf' }));
      expect(await reader.fileItemIds({ sha256: a.sha256 }, 10)).toEqual([copy.item.id, a.id]);
      expect(await reader.fileItemIds({ sha256: a.sha256 }, 1)).toEqual([copy.item.id]);
      expect(
        await reader.fileItemIds({ sha256: b.sha256, placed: { folder: 'orders', fileName: 'b.pdf' } }, 10),
      ).toEqual([b.id]);
      expect(
        await reader.fileItemIds({ sha256: b.sha256, placed: { folder: 'invoices', fileName: 'b.pdf' } }, 10),
      ).toEqual([]);
    });
  });

  describe('several callers at once', () => {
    async function toCreated(journal: PostgresJournal, fileName: string): Promise<JournalItem> {
      const item = await claimed(journal, { fileName });
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      return journal.transition(item.id, 'created', createdFields(`job-${fileName}`));
    }

    it('lets exactly one of two racing created -> uploaded moves win (two agents)', async () => {
      const agents = [await open(), await open()];
      for (let round = 0; round < 10; round++) {
        const item = await toCreated(agents[0]!, `race-${round}.pdf`);
        const results = await Promise.allSettled(
          agents.map((a) => a.transition(item.id, 'uploaded', { md5: `md5-${round}` })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(isDocexError(lost.reason, 'DOCEX_JOURNAL_TRANSITION')).toBe(true);
        const uploads = (await agents[0]!.history(item.id)).filter((e) => e.to === 'uploaded');
        expect(uploads).toHaveLength(1);
      }
    });

    it('never finishes a file before its last row, however the two moves race', async () => {
      const agents = [await open(), await open()];
      for (let round = 0; round < 10; round++) {
        const file = await claimed(agents[0]!, { fileName: `rows-${round}.csv`, mode: 'payload-word' });
        await agents[0]!.transition(file.id, 'validated');
        const rows = await agents[0]!.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 1 }, { rowIndex: 2 }]);
        for (const r of rows) {
          await agents[0]!.transition(r.id, 'creating');
          await agents[0]!.transition(r.id, 'created', { jobId: `job-${r.id}` });
        }
        const results = await Promise.allSettled([
          ...rows.map((r, i) => agents[i % 2]!.transition(r.id, 'done')),
          agents[1]!.transition(file.id, 'done'),
        ]);
        for (const r of results.slice(0, 3)) expect(r.status).toBe('fulfilled');
        const fileMove = results[3]!;
        if (fileMove.status === 'rejected') {
          expect(isDocexError(fileMove.reason, 'DOCEX_JOURNAL_TRANSITION')).toBe(true);
          expect((await agents[0]!.transition(file.id, 'done')).state).toBe('done');
        }
        const fileDoneAt = (await agents[0]!.history(file.id)).find((e) => e.to === 'done')!;
        const client = await sql();
        const order = await client.query(
          "SELECT max(id) AS last_row FROM history WHERE to_state = 'done' AND item_id = ANY($1::bigint[])",
          [rows.map((r) => r.id)],
        );
        const fileEntry = await client.query(
          "SELECT id FROM history WHERE to_state = 'done' AND item_id = $1",
          [file.id],
        );
        expect(Number(fileEntry.rows[0].id)).toBeGreaterThan(Number(order.rows[0].last_row));
        expect(fileDoneAt).toBeDefined();
      }
    });

    it('lets either the rows or the file move in when addRows races a move of the file, never both', async () => {
      const agents = [await open(), await open()];
      for (let round = 0; round < 10; round++) {
        const file = await claimed(agents[0]!, { fileName: `split-${round}.csv`, mode: 'payload-pdf' });
        await agents[0]!.transition(file.id, 'validated');
        const [rowsAdded, moved] = await Promise.allSettled([
          agents[0]!.addRows(file.id, [{ rowIndex: 0 }]),
          agents[1]!.transition(file.id, 'creating'),
        ]);
        expect([rowsAdded.status, moved.status].filter((s) => s === 'fulfilled')).toHaveLength(1);
        const after = (await agents[0]!.get(file.id))!;
        const rows = await agents[0]!.rowsOf(file.id);
        expect(after.state === 'creating' ? rows.length === 0 : rows.length === 1).toBe(true);
      }
    });

    it('serves many concurrent moves of different items on a small pool', async () => {
      const journal = await open();
      const items = await Promise.all(
        Array.from({ length: 30 }, (_, i) => claimed(journal, { fileName: `many-${i}.pdf` })),
      );
      await Promise.all(items.map((i) => journal.transition(i.id, 'validated')));
      await Promise.all(items.map((i) => journal.transition(i.id, 'creating')));
      expect((await journal.stats()).files.creating).toBe(30);
    });
  });

  describe('failures', () => {
    it('reports an unreachable server as DOCEX_JOURNAL_UNAVAILABLE, naming it without the password', async () => {
      const port = await freePort();
      const connection = postgresConnection(`postgres://docex@127.0.0.1:${port}/journal`, {
        password: PASSWORD,
        timeoutMs: 2_000,
      });
      const err = await PostgresJournal.open(connection, { clock: h.clock, log: h.log }).catch(
        (e: unknown) => e,
      );
      expect(isDocexError(err, 'DOCEX_JOURNAL_UNAVAILABLE')).toBe(true);
      expect((err as Error).message).toContain(`127.0.0.1:${port}/journal`);
      expect((err as Error).message).not.toContain(PASSWORD);
      expect(JSON.stringify(err)).not.toContain(PASSWORD);
      expect(h.logText()).not.toContain(PASSWORD);
    });

    it('times a slow statement out (rolled back, the pool still serving), but gives a big file of rows its time', async () => {
      await open();
      const client = await sql();
      await client.query(`
        CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.file_name = 'slow.pdf' OR (NEW.kind = 'row' AND NEW.row_index = 0) THEN PERFORM pg_sleep(0.6); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER slow_insert AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION slow_insert();`);
      const journal = await PostgresJournal.open(postgresConnection(url, { timeoutMs: 400 }), {
        clock: h.clock,
        log: h.log,
      });
      opened.push(journal);
      const err = await journal.recordClaim(claimInput({ fileName: 'slow.pdf' })).catch((e: unknown) => e);
      expect(isDocexError(err, 'DOCEX_JOURNAL_UNAVAILABLE')).toBe(true);
      expect((err as DocexError).details).toMatchObject({ sqlstate: '57014' });
      expect(await journal.byPath('/srv/erp/in/slow.pdf')).toEqual([]);
      // 400 ms plus 0.2 ms a row: 2,000 rows may take 800 ms.
      const file = await claimed(journal, { fileName: 'rows.csv', mode: 'payload-word' });
      await journal.transition(file.id, 'validated');
      const rows = await journal.addRows(
        file.id,
        Array.from({ length: 2_000 }, (_, i) => ({ rowIndex: i })),
      );
      expect(rows).toHaveLength(2_000);
      // The longer allowance ended with its transaction.
      expect(
        (await journal.recordClaim(claimInput({ fileName: 'slow.pdf', sourcePath: '/s/2' })).catch((e) => e))
          .code,
      ).toBe('DOCEX_JOURNAL_UNAVAILABLE');
    });

    it('drops a connection the server ended mid-transaction or while idle, and goes on with new ones', async () => {
      const journal = await open();
      const client = await sql();
      await client.query(`
        CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          -- Ended by the test's kill; long enough that a loaded machine's polling still finds it asleep.
          IF NEW.file_name = 'stalled.pdf' THEN PERFORM pg_sleep(30); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER stall AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION stall();`);
      const stalled = journal.recordClaim(claimInput({ fileName: 'stalled.pdf' })).catch((e: unknown) => e);
      for (;;) {
        const killed = await client.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'docex-agent' AND wait_event = 'PgSleep'",
        );
        if (killed.rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const err = await stalled;
      expect(isDocexError(err, 'DOCEX_JOURNAL_UNAVAILABLE')).toBe(true);
      expect((err as DocexError).details).toMatchObject({ sqlstate: '57P01' });
      expect(await journal.byPath('/srv/erp/in/stalled.pdf')).toEqual([]);
      expect((await journal.recordClaim(claimInput({ fileName: 'next.pdf' }))).kind).toBe('claimed');

      // Idle pooled connections ended by the server (a restart): logged, dropped, replaced.
      const ended = await client.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'docex-agent' AND state = 'idle'",
      );
      expect(ended.rowCount).toBeGreaterThan(0);
      while (h.logText().split('journal idle connection lost').length - 1 < ended.rowCount!) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect((await journal.recordClaim(claimInput({ fileName: 'after.pdf' }))).kind).toBe('claimed');
    });

    it('answers DOCEX_JOURNAL_UNAVAILABLE after close, and closes twice without harm', async () => {
      const journal = await open();
      await journal.close();
      await journal.close();
      expect(await codeOf(journal.get(1))).toBe('DOCEX_JOURNAL_UNAVAILABLE');
    });
  });
});
