// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configs hold ${env:} references literally
/**
 * `docex-agent journal copy` as an operator runs it, on a real SQLite journal and a real
 * PostgreSQL server: what it prints (counts, time, the target without a password, never an upload
 * URL), which password and TLS settings it takes, and what it refuses (a password in the URL, a
 * running agent, contradicting TLS settings, a target with a journal).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerJournalCommand } from '../../src/cli/journal-command.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { acquireJournalLock } from '../../src/journal/lock.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { mixedJournal } from '../journal/support/copy-fixtures.js';
import { UPLOAD_URL, UPLOAD_URL_SIGNATURE } from '../journal/support/journal-harness.js';
import { fillState } from '../returns/support/state-fixtures.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { type CliRun, runCli } from './support/run-cli.js';

const PASSWORD = 'pw-Copy-S3cret-never-shown';

let dir: string;
let stateDir: string;
let clock: ManualClock;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-journal-cli-'));
  stateDir = path.join(dir, 'state');
  clock = new ManualClock();
  const journal = SqliteJournal.open(path.join(stateDir, 'journal.sqlite'), { clock, log: silentLogger() });
  await mixedJournal(journal, clock);
  await journal.close();
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A configuration with the state folder and, when given, a journal section. */
function config(journal?: Record<string, unknown>): string {
  const file = path.join(dir, `agent-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify({ stateDir, sandbox: { enabled: true }, ...(journal ? { journal } : {}) }));
  return file;
}

const journalCopy = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli((program, deps) => registerJournalCommand(program, { ...deps, env }), ['journal', 'copy', ...args]);

/** Nothing secret in what the command printed. */
function expectNoSecrets(run: CliRun): void {
  const all = run.stdout + run.stderr;
  expect(all).not.toContain(UPLOAD_URL_SIGNATURE);
  expect(all).not.toContain(UPLOAD_URL.split('?')[0]);
  expect(all).not.toContain(PASSWORD);
}

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    return result.rows.map((r) => r.tablename as string);
  } finally {
    await client.end();
  }
}

describePostgres('docex-agent journal copy', () => {
  it('copies, prints the counts, the time and the next steps, and never an upload URL or a password', async () => {
    const url = await testDatabase();
    const run = await journalCopy(
      ['--to', url, '--config', config(), '--sslmode', 'disable', '--password-env', 'DOCEX_PG_PASSWORD'],
      { DOCEX_PG_PASSWORD: PASSWORD },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(`journal copy: ${path.join(stateDir, 'journal.sqlite')} -> ${url}`);
    expect(run.stdout).toMatch(
      /copied journal\.sqlite \(schema version 5\): 9 items \(6 files, 3 payload rows\), \d+ history entries, 1 inspections/,
    );
    expect(run.stdout).toMatch(/done in \d+\.\d s, in one transaction/);
    expect(run.stdout).toContain(`next: set journal.url to ${url}`);
    // No return path's store in this state folder: nothing of it to copy, said so.
    expect(run.stdout).toContain(`no returns.sqlite in ${stateDir}: nothing to copy`);
    expect(run.stdout).toContain(`no inbox.sqlite in ${stateDir}: nothing to copy`);
    expect(run.stdout).toContain('journal.sqlite is left as it was');
    expectNoSecrets(run);
    // The URL is on PostgreSQL, for the uploader only.
    const journal = await PostgresJournal.open(postgresConnection(url, { tls: { mode: 'disable' } }), {
      clock,
      log: silentLogger(),
    });
    try {
      const created = (await journal.unfinished()).find((i) => i.state === 'created' && i.kind === 'file');
      expect(await journal.revealUploadUrl(created!.id)).toBe(UPLOAD_URL);
    } finally {
      await journal.close();
    }
  });

  it('copies returns.sqlite and inbox.sqlite with the journal, and prints the counts of each', async () => {
    rmSync(stateDir, { recursive: true });
    await fillState(stateDir, clock);
    const url = await testDatabase();
    const run = await journalCopy(['--to', url, '--config', config(), '--sslmode', 'disable']);
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[1]).toMatch(
      /^copied journal\.sqlite \(schema version 5\): 12 items \(9 files, 3 payload rows\)/,
    );
    expect(lines.slice(2, 4)).toEqual([
      'copied returns.sqlite (schema version 3): 4 followed jobs (2 open), 4 source files, 2 sending events (1 final), 4 documents (1 written, 2 to fetch, 1 parked), 1 daily CSVs written',
      'copied inbox.sqlite (schema version 1): 3 Peppol documents saved, 3 webhook ids seen',
    ]);
    expect(run.stdout).not.toContain('nothing to copy');
    expect(run.stdout).toContain('journal.sqlite, returns.sqlite and inbox.sqlite are left as they were');
    expectNoSecrets(run);
    expect(await tables(url)).toEqual([
      'agents',
      'cluster_tasks',
      'history',
      'inbox_meta',
      'inbox_peppol_saved',
      'inbox_schema_migrations',
      'inbox_webhook_seen',
      'inspections',
      'items',
      'returns_csv_days',
      'returns_documents',
      'returns_events',
      'returns_jobs',
      'returns_meta',
      'returns_schema_migrations',
      'returns_sources',
      'schema_migrations',
    ]);

    // A second copy into it is refused by its first store already there.
    const again = await journalCopy(['--to', url, '--config', config(), '--sslmode', 'disable']);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('is not empty: it already has a journal');
  });

  it('takes journal.password and the TLS settings from the config when --to is its journal.url', async () => {
    const url = await testDatabase();
    const file = config({ url, password: '${env:DOCEX_PG_PASSWORD}', sslmode: 'disable' });
    // postgresql:// names the same database.
    const run = await journalCopy(['--to', url.replace(/^postgres:/, 'postgresql:'), '--config', file], {
      DOCEX_PG_PASSWORD: PASSWORD,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expectNoSecrets(run);

    const contradicting = await journalCopy(['--to', url, '--config', file, '--sslmode', 'verify-full'], {
      DOCEX_PG_PASSWORD: PASSWORD,
    });
    expect(contradicting.exitCode).toBe(2);
    expect(contradicting.stderr).toContain('--sslmode verify-full contradicts journal.sslmode disable');
  });

  it('asks for TLS (verify-full) towards another database unless --sslmode says otherwise', async () => {
    const url = await testDatabase();
    const run = await journalCopy(['--to', url, '--config', config()]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/DOCEX_JOURNAL_UNAVAILABLE: .*does not support SSL/);
    expect(await tables(url)).toEqual([]);
  });

  it('refuses a password in --to without printing it, and an unset --password-env', async () => {
    const url = await testDatabase();
    const withPassword = url.replace('://', `://docex_test:${PASSWORD}@`).replace(/@[^@]*@/, '@');
    const run = await journalCopy(['--to', withPassword, '--config', config(), '--sslmode', 'disable']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('carries a password: leave it out of the URL');
    expectNoSecrets(run);
    expect(run.stdout).toBe('');

    const unset = await journalCopy([
      '--to',
      url,
      '--config',
      config(),
      '--password-env',
      'NOT_SET_ANYWHERE',
    ]);
    expect(unset.exitCode).toBe(2);
    expect(unset.stderr).toContain('--password-env NOT_SET_ANYWHERE');
    expect(await tables(url)).toEqual([]);
  });

  it('refuses while the agent runs, naming its pid', async () => {
    const url = await testDatabase();
    const lock = acquireJournalLock(stateDir);
    try {
      const run = await journalCopy(['--to', url, '--config', config(), '--sslmode', 'disable']);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(`DOCEX_JOURNAL_LOCKED: the state folder is in use by pid ${process.pid}`);
      expect(await tables(url)).toEqual([]);
    } finally {
      lock.release();
    }
  });

  it('refuses a target that has a journal, and a state folder without one', async () => {
    const url = await testDatabase();
    const file = config();
    expect((await journalCopy(['--to', url, '--config', file, '--sslmode', 'disable'])).exitCode).toBe(0);
    const again = await journalCopy(['--to', url, '--config', file, '--sslmode', 'disable']);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('is not empty: it already has a journal');

    rmSync(stateDir, { recursive: true });
    const none = await journalCopy(['--to', await testDatabase(), '--config', file, '--sslmode', 'disable']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('nothing to copy');
  });

  it('reports a failure midway without an upload URL, and leaves the target empty', async () => {
    const url = await testDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // The server refuses the item that carries the upload URL, quoting the whole row.
      await client.query(`
        CREATE FUNCTION refuse_url() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.upload_url IS NOT NULL THEN RAISE EXCEPTION 'refused row %', row_to_json(NEW); END IF;
          RETURN NEW;
        END $$;
        CREATE FUNCTION arm() RETURNS event_trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() WHERE object_identity = 'public.items') THEN
            EXECUTE 'CREATE TRIGGER refuse_url BEFORE INSERT ON items FOR EACH ROW EXECUTE FUNCTION refuse_url()';
          END IF;
        END $$;
        CREATE EVENT TRIGGER arm ON ddl_command_end WHEN TAG IN ('CREATE TABLE') EXECUTE FUNCTION arm();`);
    } finally {
      await client.end();
    }
    const run = await journalCopy(['--to', url, '--config', config(), '--sslmode', 'disable']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('DOCEX_JOURNAL_UNAVAILABLE');
    expect(run.stderr).toContain('refused row');
    expectNoSecrets(run);
    expect(await tables(url)).toEqual([]);
  });
});
