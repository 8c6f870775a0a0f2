/**
 * The PostgreSQL journal for the benchmarks: one real server per bench run (test/support/postgres.ts,
 * as the test suite starts it), a fresh database per agent run, and what the server did for it:
 * statements by kind (pg_stat_statements), transactions, and the CPU of its processes.
 *
 * Unlike the test suite's server, this one keeps PostgreSQL's durability defaults (fsync, full page
 * writes, synchronous commit): the SQLite journal it is compared with waits for its fsyncs too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { JournalLocation } from '../../src/journal/location.js';
import { startPostgresServer, type TestPostgresServer } from '../../test/support/postgres.js';
import { round } from './stats.js';

/** Which journal an agent run of the bench uses. */
export type BenchJournal = { kind: 'sqlite' } | { kind: 'postgres'; url: string; poolSize?: number };

/** The agent configuration's `journal` section for a run (nothing for SQLite: the default). */
export function journalSection(journal: BenchJournal | undefined): Record<string, unknown> {
  if (journal?.kind !== 'postgres') return {};
  return {
    journal: {
      url: journal.url,
      // A server on loopback: plain TCP (the config's default is verify-full).
      sslmode: 'disable',
      ...(journal.poolSize !== undefined ? { poolSize: journal.poolSize } : {}),
    },
  };
}

/** Where the bench reads the run's timings from afterwards. */
export function journalLocation(journal: BenchJournal | undefined, sqliteFile: string): JournalLocation {
  if (journal?.kind !== 'postgres') return { kind: 'sqlite', file: sqliteFile };
  return {
    kind: 'postgres',
    connection: {
      url: journal.url,
      tls: { mode: 'disable' },
      poolSize: 4,
      timeoutMs: 30_000,
    },
  };
}

/** One plain client of `url` for `use`, ended after it. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** True once the agent has made its journal's tables (it migrates at start-up). */
export function journalTablesExist(url: string): () => Promise<boolean> {
  return async () => {
    try {
      return await withClient(url, async (c) => {
        const r = await c.query<{ t: string | null }>("SELECT to_regclass('public.history')::text AS t");
        return r.rows[0]?.t != null;
      });
    } catch {
      return false;
    }
  };
}

export interface BenchPostgres {
  server: TestPostgresServer;
  /** A fresh, empty database (one per agent run: the agent refuses content it has seen). */
  createDatabase(): Promise<string>;
  /** What the server did for one database, read once the agent is stopped. */
  usage(databaseUrl: string): Promise<ServerUsage>;
  /** CPU (user + system, ms) of the server's processes so far, ended backends included. */
  cpuMs(): number;
  stop(): Promise<void>;
}

export interface StatementCount {
  /** The statement as pg_stat_statements normalises it (constants as $n); a long one's start and end. */
  query: string;
  calls: number;
  /** Server-side execution time of all its calls, ms. */
  totalMs: number;
}

export interface ServerUsage {
  /** Statements the agent sent (pg_stat_statements, utility statements such as BEGIN included). */
  statements: number;
  /** Commits and rollbacks (pg_stat_database). */
  commits: number;
  rollbacks: number;
  /** Server-side execution time of every statement, ms. */
  execMs: number;
  /** The statements by count, most frequent first. */
  top: StatementCount[];
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime + cutime + cstime of a process (its reaped children included), ms. */
function processTreeCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Live children of a process: their own CPU, not yet in the parent's cutime/cstime. */
function liveChildrenCpuMs(parent: number): number {
  let total = 0;
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[1]) !== parent) continue;
      total += ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
    } catch {}
  }
  return total;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A long statement as its start and its end (the column list in the middle tells statements apart less). */
function shorten(query: string): string {
  return query.length <= 200 ? query : `${query.slice(0, 80)} … ${query.slice(-110)}`;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const server = await startPostgresServer({
    extraConfig: [
      // The harness turns these off for throwaway test data; a journal's server keeps them on.
      'fsync = on',
      'full_page_writes = on',
      'synchronous_commit = on',
      'shared_buffers = 128MB',
      "shared_preload_libraries = 'pg_stat_statements'",
      'pg_stat_statements.track = top',
      'pg_stat_statements.max = 5000',
    ],
  });
  await withClient(server.url(), (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
  const postmasterPid = () =>
    Number(readFileSync(path.join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    server,
    createDatabase: () => server.createDatabase(),
    cpuMs() {
      const pid = postmasterPid();
      return processTreeCpuMs(pid) + liveChildrenCpuMs(pid);
    },
    async usage(databaseUrl) {
      const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
      return withClient(server.url(), async (c) => {
        // The agent's sessions end after it exits: wait for their statistics to be flushed.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const r = await c.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [database],
          );
          if (Number(r.rows[0]?.n) === 0 || Date.now() > deadline) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const statements = await c.query<{ query: string; calls: string; total: number }>(
          `SELECT s.query, s.calls::text AS calls, s.total_exec_time AS total
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE d.datname = $1 ORDER BY s.calls DESC`,
          [database],
        );
        const db = await c.query<{ commits: string; rollbacks: string }>(
          'SELECT xact_commit::text AS commits, xact_rollback::text AS rollbacks FROM pg_stat_database WHERE datname = $1',
          [database],
        );
        const rows = statements.rows.map((r) => ({
          query: shorten(r.query.replace(/\s+/g, ' ')),
          calls: Number(r.calls),
          totalMs: round(r.total, 1),
        }));
        return {
          statements: rows.reduce((n, r) => n + r.calls, 0),
          commits: Number(db.rows[0]?.commits ?? 0),
          rollbacks: Number(db.rows[0]?.rollbacks ?? 0),
          execMs: round(
            rows.reduce((n, r) => n + r.totalMs, 0),
            1,
          ),
          top: rows.slice(0, 25),
        };
      });
    },
    stop: () => server.destroy(),
  };
}
