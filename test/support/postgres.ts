/**
 * A real PostgreSQL server for tests: `initdb` into a fresh temp folder, then `pg_ctl` starts it on
 * 127.0.0.1 (only) on a free port, with its unix socket in the same folder. Nothing of the machine's
 * own clusters is used (Debian's postgresql-common may run one on 5432; it is left alone).
 *
 * One server serves a whole test run: `postgres-global-setup.ts` starts it and hands its address to
 * the test files (vitest `provide`/`inject`); `testDatabase()` then creates a fresh, empty database
 * per call, so test files running in parallel forks never share tables. Tests that stop, kill or
 * restart a server start their own with `startPostgresServer()`.
 *
 * Binaries: DOCEX_PG_BINDIR, else `pg_config --bindir`, else the newest /usr/lib/postgresql/<n>/bin
 * (Debian's layout; the package puts no initdb on PATH), else an initdb on PATH. Missing: suites are
 * skipped with a visible reason (`describePostgres`), unless DOCEX_REQUIRE_POSTGRES=1 (CI), where
 * they fail instead.
 */
import { type ExecFileOptions, execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { freePort } from './free-port.js';

/** What a test file needs to reach the run's shared server (serialisable: it crosses `provide`). */
export interface PostgresConnectionInfo {
  host: string;
  port: number;
  superuser: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared server, when PostgreSQL is available and it started. */
    docexPostgres?: PostgresConnectionInfo;
    /** Why the run's shared server did not start although PostgreSQL is installed. */
    docexPostgresError?: string;
  }
}

const REQUIRED_BINARIES = ['initdb', 'pg_ctl', 'postgres'] as const;

function hasBinaries(dir: string): boolean {
  return REQUIRED_BINARIES.every((name) => {
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function versionOf(dir: string): number {
  const n = Number.parseFloat(path.basename(path.dirname(dir)));
  return Number.isFinite(n) ? n : -1;
}

/** The folder holding initdb, pg_ctl and postgres, or why there is none. */
function findBindir(): { bindir: string } | { missing: string } {
  const override = process.env.DOCEX_PG_BINDIR;
  if (override) {
    return hasBinaries(override)
      ? { bindir: override }
      : { missing: `DOCEX_PG_BINDIR=${override} lacks ${REQUIRED_BINARIES.join('/')}` };
  }
  try {
    const fromPgConfig = execFileSync('pg_config', ['--bindir'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    // libpq-dev's pg_config alone answers /usr/bin, which has no initdb on Debian: look further.
    if (fromPgConfig && hasBinaries(fromPgConfig)) return { bindir: fromPgConfig };
  } catch {}
  let debian: string[] = [];
  try {
    debian = readdirSync('/usr/lib/postgresql')
      .map((v) => path.join('/usr/lib/postgresql', v, 'bin'))
      .sort((a, b) => versionOf(b) - versionOf(a));
  } catch {}
  for (const dir of debian) if (hasBinaries(dir)) return { bindir: dir };
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && hasBinaries(dir)) return { bindir: dir };
  }
  return { missing: 'no initdb/pg_ctl/postgres found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)' };
}

const found = findBindir();
/** The PostgreSQL server binaries' folder, or undefined when PostgreSQL is not installed. */
export const PG_BINDIR: string | undefined = 'bindir' in found ? found.bindir : undefined;
export const postgresAvailable = PG_BINDIR !== undefined;
export const postgresRequired = process.env.DOCEX_REQUIRE_POSTGRES === '1';
const missingReason = 'missing' in found ? found.missing : '';

/**
 * `describe` for suites that need a real PostgreSQL: skipped (name says why) when PostgreSQL is
 * missing, or a failing test in its place when DOCEX_REQUIRE_POSTGRES=1.
 */
export function describePostgres(name: string, body: () => void): void {
  if (postgresAvailable) {
    describe(name, body);
    return;
  }
  if (postgresRequired) {
    describe(name, () => {
      it('needs a real PostgreSQL server (DOCEX_REQUIRE_POSTGRES=1)', () => {
        throw new Error(
          `${missingReason}: install postgresql or set DOCEX_PG_BINDIR (DOCEX_REQUIRE_POSTGRES=1 forbids skipping)`,
        );
      });
    });
    return;
  }
  describe.skipIf(true)(`${name} [skipped: ${missingReason}; install postgresql]`, body);
}

export interface PostgresServerOptions {
  /** Superuser role made by initdb (`-U`); default `docex_test`. */
  superuser?: string;
  /** Extra postgresql.conf lines (appended after the harness's own settings). */
  extraConfig?: readonly string[];
  /** How long start-up may take before it fails; default 30 s. */
  startTimeoutMs?: number;
}

export interface TestPostgresServer {
  host: string;
  /** Fixed for the server's life: restart() and start() come back on it. */
  port: number;
  superuser: string;
  /** The cluster's data folder (inside the temp folder). */
  dataDir: string;
  /** The temp folder: data, unix socket, server log. */
  root: string;
  /** `postgres://superuser@127.0.0.1:port/database` (default database `postgres`). */
  url(database?: string): string;
  /** Creates a fresh, empty database with a unique name; returns its URL. */
  createDatabase(): Promise<string>;
  /** Fast shutdown (`pg_ctl stop -m fast`): sessions are ended, data kept; `start()` brings it back. */
  stop(): Promise<void>;
  /** `stop()` then `start()` on the same port and data. */
  restart(): Promise<void>;
  /** Immediate shutdown (`pg_ctl stop -m immediate`), a crash as clients see it; `start()` recovers. */
  kill(): Promise<void>;
  /** Starts the server again after `stop()` or `kill()`, same port and data; resolves when it takes connections. */
  start(): Promise<void>;
  /** Immediate shutdown and removal of the temp folder; the server is gone for good. */
  destroy(): Promise<void>;
}

/**
 * PostgreSQL refuses to run as root, and tests and CI run as root. Then initdb, pg_ctl and postgres
 * run as `nobody` (spawn's uid/gid; libuv drops root's supplementary groups too): it exists on
 * every Debian and most other systems, so nothing needs `useradd` (no change to the machine, works
 * with a read-only /etc), and it owns nothing else that the server could reach. Debian's own
 * `postgres` account would do too, but it exists only where the package was installed the Debian
 * way. Anyone else running as nobody could read this cluster's files; they are throwaway test data.
 * Not root: everything runs as the current user.
 */
function serverAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
    const uid = id('-u');
    const gid = id('-g');
    if (Number.isInteger(uid) && Number.isInteger(gid) && uid !== 0) return { uid, gid };
  } catch {}
  throw new Error('running as root, but there is no `nobody` account to run PostgreSQL as');
}

/** A temp base every user can traverse (the server account must reach its folder). */
function tempBase(): string {
  const base = os.tmpdir();
  for (let dir = base; ; dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return '/tmp'; // not traversable by others
    if (dir === path.dirname(dir)) return base;
  }
}

function run(bindir: string, name: string, args: string[], options: ExecFileOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path.join(bindir, name), args, { ...options, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${name} ${args.join(' ')} failed: ${err.message}\n${stderr}${stdout}`));
      else resolve(String(stdout));
    });
  });
}

/** Connects until the server answers `SELECT 1` or the deadline passes (no fixed sleep: 25 ms polls). */
async function waitAcceptingConnections(url: string, deadline: number): Promise<void> {
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`PostgreSQL did not accept connections in time: ${String(err)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

let databaseCounter = 0;

/** Creates a fresh database with a unique name (pid, counter, random) on a server; returns its URL. */
export async function createTestDatabase(info: PostgresConnectionInfo): Promise<string> {
  const name = `docex_t_${process.pid}_${++databaseCounter}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client(connectionConfig(info, 'postgres'));
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end().catch(() => {});
  }
  return urlOf(info, name);
}

function connectionConfig(info: PostgresConnectionInfo, database: string): pg.ClientConfig {
  return { host: info.host, port: info.port, user: info.superuser, database };
}

function urlOf(info: PostgresConnectionInfo, database: string): string {
  return `postgres://${encodeURIComponent(info.superuser)}@${info.host}:${info.port}/${encodeURIComponent(database)}`;
}

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<TestPostgresServer> {
  const bindir = PG_BINDIR;
  if (!bindir) throw new Error(`PostgreSQL not found: ${missingReason}`);
  const superuser = options.superuser ?? 'docex_test';
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const account = serverAccount();
  const root = mkdtempSync(path.join(tempBase(), 'docex-pg-'));
  if (account) chownSync(root, account.uid, account.gid);
  const dataDir = path.join(root, 'data');
  const logFile = path.join(root, 'server.log');
  const host = '127.0.0.1';
  let port = 0;

  // The children's own environment: no inherited PG* variables or locale settings steer them.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    LANG: 'C',
    TZ: 'UTC',
  };
  const spawnOptions: ExecFileOptions = {
    cwd: root,
    env,
    ...(account ?? {}),
    timeout: startTimeoutMs + 10_000,
  };
  const pgCtl = (args: string[]) => run(bindir, 'pg_ctl', ['-D', dataDir, ...args], spawnOptions);

  // A test process that ends without destroy() must not leave its server or folder behind, even
  // when it is killed: vitest ends its forks with SIGTERM (no 'exit' event), and a killed run may
  // be SIGKILLed. So a small detached watchdog holds a pipe from this process; when the pipe closes
  // (this process is gone, however it ended), it sends the postmaster SIGQUIT (what
  // `pg_ctl stop -m immediate` sends), waits for its pid file to go (at most 10 s) and removes the
  // folder (retrying while an orphaned initdb may still write there). destroy() closes the pipe
  // after it has done the same itself.
  const watchdog = spawn(
    '/bin/sh',
    [
      '-c',
      [
        'cat >/dev/null',
        'pid=$(head -n 1 "$1/postmaster.pid" 2>/dev/null) && [ -n "$pid" ] && kill -QUIT "$pid" 2>/dev/null',
        'i=0; while [ -e "$1/postmaster.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done',
        // An initdb or pg_ctl orphaned by the same kill may still write there: retry a few times.
        'for i in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$2"; [ -e "$2" ] || break; sleep 0.2; done',
      ].join('\n'),
      'docex-pg-watchdog',
      dataDir,
      root,
    ],
    { detached: true, stdio: ['pipe', 'ignore', 'ignore'] },
  );
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  const removeRoot = () => {
    try {
      rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    } catch {}
    watchdog.stdin?.end();
  };

  try {
    await run(
      bindir,
      'initdb',
      [
        '-D',
        dataDir,
        '-U',
        superuser,
        '--auth-local=trust',
        '--auth-host=trust',
        '--no-sync',
        '-E',
        'UTF8',
        '--locale=C',
      ],
      spawnOptions,
    );

    const writeConfig = () => {
      const conf = path.join(dataDir, 'postgresql.conf');
      const base = readFileSync(conf, 'utf8').split('\n# docex test harness\n')[0];
      writeFileSync(
        conf,
        [
          base,
          '# docex test harness',
          `port = ${port}`,
          `listen_addresses = '${host}'`,
          `unix_socket_directories = '${root}'`,
          // A test run's cluster is thrown away: skip fsync and torn-page protection. Commit
          // semantics stay the defaults (synchronous_commit on): a committed row survives kill().
          'fsync = off',
          'full_page_writes = off',
          'max_connections = 200',
          'shared_buffers = 32MB',
          'logging_collector = off',
          ...(options.extraConfig ?? []),
          '',
        ].join('\n'),
      );
    };

    const startOnce = async () => {
      await pgCtl(['start', '-w', '-t', String(Math.ceil(startTimeoutMs / 1000)), '-l', logFile]);
      await waitAcceptingConnections(
        urlOf({ host, port, superuser }, 'postgres'),
        Date.now() + startTimeoutMs,
      );
    };

    // freePort() leaves a small race until postgres binds: on a failed start take another port.
    const logSize = () => (existsSync(logFile) ? statSync(logFile).size : 0);
    const logSince = (offset: number) =>
      existsSync(logFile) ? readFileSync(logFile).subarray(offset).toString() : '';
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      writeConfig();
      const logStart = logSize();
      try {
        await startOnce();
        break;
      } catch (err) {
        const log = logSince(logStart);
        if (attempt >= 3 || !/could not bind|could not create any TCP\/IP sockets/i.test(log)) {
          throw new Error(`${String(err)}\n--- server log ---\n${log}`);
        }
      }
    }

    const info: PostgresConnectionInfo = { host, port, superuser };
    const start = async () => {
      const logStart = logSize();
      try {
        await startOnce();
      } catch (err) {
        throw new Error(`${String(err)}\n--- server log ---\n${logSince(logStart)}`);
      }
    };
    const stop = async () => {
      await pgCtl(['stop', '-m', 'fast', '-w']);
    };
    return {
      host,
      port,
      superuser,
      dataDir,
      root,
      url: (database = 'postgres') => urlOf(info, database),
      createDatabase: () => createTestDatabase(info),
      stop,
      async restart() {
        await stop();
        await start();
      },
      async kill() {
        await pgCtl(['stop', '-m', 'immediate', '-w']);
      },
      start,
      async destroy() {
        await pgCtl(['stop', '-m', 'immediate', '-w']).catch(() => {}); // already down: fine
        removeRoot();
      },
    };
  } catch (err) {
    await pgCtl(['stop', '-m', 'immediate', '-w']).catch(() => {});
    removeRoot();
    throw err;
  }
}

/**
 * A fresh, empty database on the run's shared server (started by `postgres-global-setup.ts`), as a
 * `postgres://` URL. Each call makes a new one, so tests and parallel test files are isolated.
 * Use inside `describePostgres`; throws when the shared server is not there.
 */
export async function testDatabase(): Promise<string> {
  const info = inject('docexPostgres');
  if (!info) {
    const why =
      inject('docexPostgresError') ?? (postgresAvailable ? 'the global setup did not run' : missingReason);
    throw new Error(`no shared PostgreSQL server for this test run: ${why}`);
  }
  return createTestDatabase(info);
}
