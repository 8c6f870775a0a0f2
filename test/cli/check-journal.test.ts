// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configs hold ${env:} references literally
/**
 * `docex-agent check` on a PostgreSQL journal (journal.url), against a real server: the connection
 * (its failure without the password), the schema version, the clock skew (this host's clock
 * shifted), and the rights, whose GRANT hints are run to show they are enough for the agent.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { journalLines, poolLine, sqlIdentifier } from '../../src/cli/check-journal.js';
import { type CheckLine, failed, formatCheck } from '../../src/cli/check-line.js';
import { runChecks } from '../../src/cli/check-runner.js';
import { loadConfig } from '../../src/config/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { PG_SCHEMA_VERSION } from '../../src/journal/postgres/schema.js';
import { claimInput } from '../journal/support/journal-harness.js';
import { freePort } from '../support/free-port.js';
import { describePostgres, testDatabase } from '../support/postgres.js';

const PASSWORD = 'pw-Check-S3cret-never-shown';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-check-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The loaded configuration of an agent whose journal is at `url` (password from the environment). */
function configFor(url: string | undefined) {
  const file = path.join(dir, `agent-${randomBytes(4).toString('hex')}.yaml`);
  const journal = url
    ? { url, password: '${env:DOCEX_PG_PASSWORD}', sslmode: 'disable', timeoutMs: '5s' }
    : {};
  writeFileSync(file, stringify({ stateDir: path.join(dir, 'state'), sandbox: { enabled: true }, journal }));
  return loadConfig(file, { env: { DOCEX_PG_PASSWORD: PASSWORD } }).config;
}

const text = (lines: CheckLine[]) => lines.map((l) => formatCheck(l, { plain: true })).join('');
const by = (lines: CheckLine[], what: string) => lines.filter((l) => l.what === what);

async function sql(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The same database, as another user (the test server trusts every local user). */
const as = (url: string, user: string) => {
  const u = new URL(url);
  u.username = user;
  return u.toString();
};

const openJournal = (url: string) =>
  PostgresJournal.open(postgresConnection(url, { tls: { mode: 'disable' } }), {
    clock: new ManualClock(),
    log: silentLogger(),
  });

describe('check: the journal lines without PostgreSQL', () => {
  it('adds nothing for a SQLite journal (the state folder line covers it)', async () => {
    expect(await journalLines(configFor(undefined))).toEqual([]);
  });

  it('warns when journal.poolSize is below concurrency, since files in flight would wait for a connection', () => {
    const config = configFor(undefined);
    expect(
      poolLine({ ...config, concurrency: 4, journal: { ...config.journal, poolSize: 4 } }),
    ).toBeUndefined();
    const line = poolLine({ ...config, concurrency: 8, journal: { ...config.journal, poolSize: 4 } });
    expect(line).toMatchObject({ ok: true, warn: true, what: 'journal pool' });
    expect(line!.detail).toBe(
      'journal.poolSize 4 is below concurrency 8: files in flight wait for a connection',
    );
    expect(line!.hint).toContain('set journal.poolSize: 8');
  });

  it('quotes an identifier only when SQL needs it', () => {
    expect(sqlIdentifier('docex')).toBe('docex');
    expect(sqlIdentifier('Docex-Agent')).toBe('"Docex-Agent"');
    expect(sqlIdentifier('a"b')).toBe('"a""b"');
  });
});

describePostgres('check: a PostgreSQL journal', () => {
  it('puts the journal lines after the state folder, and fails the whole check when the journal fails', async () => {
    const port = await freePort();
    const lines = await runChecks(configFor(`postgres://docex@127.0.0.1:${port}/docex`), {
      asRoot: false,
      handshake: { timeoutMs: 5000 },
    });
    expect(lines.slice(0, 2).map((l) => [l.what, l.ok])).toEqual([
      ['state folder', true],
      ['journal', false],
    ]);
    expect(failed(lines)).toBe(true);
  });

  it('fails on an unreachable server, with the reason and a hint, never the password', async () => {
    const port = await freePort();
    const lines = await journalLines(configFor(`postgres://docex@127.0.0.1:${port}/docex`));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ ok: false, what: 'journal' });
    const out = text(lines);
    expect(out).toContain(
      `FAIL journal: DOCEX_JOURNAL_UNAVAILABLE: the journal at postgres://docex@127.0.0.1:${port}/docex`,
    );
    expect(out).toMatch(/ECONNREFUSED/);
    expect(out).toContain(
      'fix: check journal.url (host, port, database, user), journal.password and journal.sslmode',
    );
    expect(out).not.toContain(PASSWORD);
  });

  it('passes on a fresh database: reached, no journal yet, clocks agree, may create the tables', async () => {
    const url = await testDatabase();
    const lines = await journalLines(configFor(url));
    expect(lines.filter((l) => !l.ok || l.warn)).toEqual([]);
    expect(lines.map((l) => l.what)).toEqual([
      'journal',
      'journal schema',
      'journal clock',
      'journal rights',
    ]);
    expect(by(lines, 'journal')[0]!.detail).toMatch(
      new RegExp(`^PostgreSQL \\d+\\.\\d+.* at ${url}, as docex_test$`),
    );
    expect(by(lines, 'journal schema')[0]!.detail).toBe(
      `no journal yet: created at first start (version ${PG_SCHEMA_VERSION})`,
    );
    expect(by(lines, 'journal clock')[0]!.detail).toMatch(
      /^within \d+\.\d s of this host's \(round trip \d+ ms\)$/,
    );
    expect(by(lines, 'journal rights')[0]!.detail).toBe(
      "docex_test may create the journal's tables in schema public",
    );
    expect(text(lines)).not.toContain(PASSWORD);

    // Once the agent has made it: the current version, read and write.
    await (await openJournal(url)).close();
    const after = await journalLines(configFor(url));
    expect(after.filter((l) => !l.ok || l.warn)).toEqual([]);
    expect(by(after, 'journal schema')[0]!.detail).toBe(`version ${PG_SCHEMA_VERSION} (current)`);
    expect(by(after, 'journal rights')[0]!.detail).toBe(
      "docex_test may read and write the journal's tables in schema public",
    );
  });

  it("warns when this host's clock is 10 s off the database's, with the figure", async () => {
    const url = await testDatabase();
    const ahead = await journalLines(configFor(url), { now: () => Date.now() + 10_000 });
    const [line] = by(ahead, 'journal clock');
    expect(line).toMatchObject({ ok: true, warn: true });
    expect(line!.detail).toMatch(/^the database's clock is (9\.9|10\.0|10\.1) s behind this host's/);
    expect(line!.hint).toContain('chrony');
    const behind = await journalLines(configFor(url), { now: () => Date.now() - 10_000 });
    expect(by(behind, 'journal clock')[0]!.detail).toMatch(/ (9\.9|10\.0|10\.1) s ahead of this host's/);
    // 4 s is within the tolerance.
    const close = await journalLines(configFor(url), { now: () => Date.now() + 4_000 });
    expect(by(close, 'journal clock')[0]).toMatchObject({ ok: true });
    expect(by(close, 'journal clock')[0]!.warn).toBeUndefined();
  });

  it('says which schema versions are migrated at next start and which need a newer agent', async () => {
    const url = await testDatabase();
    await (await openJournal(url)).close();
    await sql(url, `DELETE FROM schema_migrations WHERE version = ${PG_SCHEMA_VERSION}`);
    const older = by(await journalLines(configFor(url)), 'journal schema')[0]!;
    expect(older).toMatchObject({ ok: true, warn: true });
    expect(older.detail).toBe(
      `version ${PG_SCHEMA_VERSION - 1}, this agent's is ${PG_SCHEMA_VERSION}: migrated at next start`,
    );
    await sql(url, `INSERT INTO schema_migrations VALUES (${PG_SCHEMA_VERSION}, 0), (99, 0)`);
    const newer = await journalLines(configFor(url));
    expect(by(newer, 'journal schema')[0]).toMatchObject({
      ok: false,
      detail: `version 99, written by a newer agent: this one knows up to ${PG_SCHEMA_VERSION}`,
      hint: 'upgrade the agent',
    });
  });

  it('fails for a user without rights, naming the GRANTs; once they are run, the agent works as that user', async () => {
    const url = await testDatabase();
    const role = `docex_norights_${randomBytes(4).toString('hex')}`;
    await sql(url, `CREATE ROLE ${role} LOGIN`);
    const asRole = as(url, role);

    // An empty database: PostgreSQL 15 gives PUBLIC no CREATE on schema public.
    const empty = by(await journalLines(configFor(asRole)), 'journal rights');
    expect(empty).toEqual([
      {
        ok: false,
        what: 'journal rights',
        detail: `${role} may not create the journal's tables in schema public`,
        hint: `as the database owner: GRANT USAGE, CREATE ON SCHEMA public TO ${role};`,
      },
    ]);

    // A journal made by another user: no rights on its tables (USAGE on public is PUBLIC's).
    await (await openJournal(url)).close();
    const existing = by(await journalLines(configFor(asRole)), 'journal rights');
    expect(existing.map((l) => l.ok)).toEqual([false]);
    expect(existing[0]!.detail).toBe(
      `${role} lacks SELECT, INSERT on schema_migrations; SELECT, INSERT, UPDATE, DELETE on items; ` +
        'SELECT, INSERT, UPDATE, DELETE on history; SELECT, INSERT, UPDATE, DELETE on inspections; ' +
        'SELECT, INSERT, UPDATE, DELETE on agents; SELECT, INSERT, UPDATE on cluster_tasks',
    );
    expect(existing[0]!.hint).toBe(
      `as the tables' owner: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role};`,
    );

    const lines = await journalLines(configFor(asRole));
    expect(by(lines, 'journal schema')[0]).toMatchObject({
      ok: true,
      warn: true,
      detail: `not known: ${role} may not read schema_migrations`,
    });

    // The table GRANT is enough for an up-to-date journal: its start creates nothing.
    await sql(url, existing[0]!.hint!.replace("as the tables' owner: ", ''));
    const granted = await journalLines(configFor(asRole));
    expect(granted.filter((l) => !l.ok || l.warn)).toEqual([]);
    const journal = await openJournal(asRole);
    try {
      expect((await journal.recordClaim(claimInput())).kind).toBe('claimed');
    } finally {
      await journal.close();
    }

    // A journal to migrate at next start needs CREATE on the schema and the tables' owner.
    await sql(url, `DELETE FROM schema_migrations WHERE version = ${PG_SCHEMA_VERSION}`);
    const migrate = by(await journalLines(configFor(asRole)), 'journal rights');
    expect(migrate).toEqual([
      {
        ok: false,
        what: 'journal rights',
        detail: `${role} lacks CREATE on schema public, which the migration at next start needs`,
        hint: `as the database owner: GRANT USAGE, CREATE ON SCHEMA public TO ${role};`,
      },
      {
        ok: false,
        what: 'journal rights',
        detail: `the migration at next start alters the journal's tables, owned by docex_test, not by ${role}`,
        hint: `run the agent as docex_test, or as docex_test: GRANT docex_test TO ${role};`,
      },
    ]);
  });
});
