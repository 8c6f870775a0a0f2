/**
 * The connection to a PostgreSQL journal: a pg.Pool built from a PostgresConnection (host, user and
 * database from the URL, the password beside it, TLS as libpq's sslmode names it), and the session
 * that runs every statement on it: one pooled client per transaction, released in a finally, a
 * client whose connection broke destroyed rather than put back. Errors leave as DocexErrors that
 * name the server without its password.
 */
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';
import { DocexError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { describeLocation, type PostgresConnection, type PostgresTls } from '../location.js';
import { isConnectionBroken, journalFailure } from './errors.js';

/** How the journal's sessions show in pg_stat_activity. */
export const APPLICATION_NAME = 'docex-agent';

export const DEFAULT_POOL_SIZE = 4;
export const DEFAULT_TIMEOUT_MS = 10_000;

/** A connection from a URL alone (tests, tools): the defaults for the rest. */
export function postgresConnection(url: string, rest: Partial<PostgresConnection> = {}): PostgresConnection {
  return { poolSize: DEFAULT_POOL_SIZE, timeoutMs: DEFAULT_TIMEOUT_MS, ...rest, url };
}

/** The server's statement_timeout fires first; the client's own timer only catches a silent network. */
const QUERY_TIMEOUT_GRACE_MS = 2_000;

const INT8_OID = 20;
const INT8_ARRAY_OID = 1016;

/** An int8 as a JS number: ids, epoch ms and counts stay far below 2^53; anything else is refused. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`a BIGINT beyond 2^53 (${text.length} digits)`);
  return n;
}

/**
 * The pool's own type parsers (never the process-wide pg.types): BIGINT and BIGINT[] as numbers,
 * everything else as pg parses it (JSON columns come back parsed).
 */
export function journalTypeParsers(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, 'text', parseInt8);
  // pg's typings know only the scalar types' oids.
  const defaultParser = pg.types.getTypeParser as (oid: number, format: 'text') => unknown;
  const parseArray = defaultParser(INT8_ARRAY_OID, 'text') as (text: string) => (string | null)[];
  types.setTypeParser(INT8_ARRAY_OID, 'text', (text) =>
    parseArray(text).map((v) => (v === null ? null : parseInt8(v))),
  );
  return types;
}

/** libpq's sslmode as Node's TLS options; no TLS section means plain TCP. */
export function sslOptions(tls: PostgresTls | undefined): false | ConnectionOptions {
  if (tls === undefined || tls.mode === 'disable') return false;
  const client: ConnectionOptions = {
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key } : {}),
  };
  // require: encrypted, the server's certificate not checked (as libpq does without a root CA).
  if (tls.mode === 'require') return { ...client, rejectUnauthorized: false };
  const verified: ConnectionOptions = {
    ...client,
    rejectUnauthorized: true,
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
  };
  // verify-ca: the chain is checked, the host name is not.
  if (tls.mode === 'verify-ca') return { ...verified, checkServerIdentity: () => undefined };
  return verified;
}

export interface ServerTarget {
  host: string | undefined;
  port: number | undefined;
  user: string | undefined;
  database: string | undefined;
  password: string | undefined;
}

const PROTOCOLS = new Set(['postgres:', 'postgresql:']);

/**
 * Host, port, user and database from the URL (percent-decoded), the password from the connection.
 * A query parameter other than `host` (a socket folder) is refused: TLS and timeouts are settings
 * of their own, and a parameter pg would take silently (sslmode=disable) must not override them.
 */
export function serverTarget(connection: PostgresConnection): ServerTarget {
  const shown = describeLocation({ kind: 'postgres', connection });
  let url: URL;
  try {
    url = new URL(connection.url);
  } catch {
    throw new DocexError('DOCEX_CONFIG_INVALID', `the journal's PostgreSQL URL cannot be read: ${shown}`);
  }
  if (!PROTOCOLS.has(url.protocol)) {
    throw new DocexError(
      'DOCEX_CONFIG_INVALID',
      `the journal's URL must start with postgres:// or postgresql://: ${shown}`,
    );
  }
  const unknown = [...url.searchParams.keys()].filter((key) => key !== 'host');
  if (unknown.length > 0) {
    throw new DocexError(
      'DOCEX_CONFIG_INVALID',
      `the journal's URL ${shown} has parameter(s) ${unknown.join(', ')}: set TLS with the journal's tls ` +
        'settings and the timeouts with timeoutMs; only host (a socket folder) is read from the URL',
    );
  }
  const decode = (text: string) => (text === '' ? undefined : decodeURIComponent(text));
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host: decode(url.searchParams.get('host') ?? hostname),
    port: url.port === '' ? undefined : Number(url.port),
    user: decode(url.username),
    database: decode(url.pathname.replace(/^\//, '')),
    password: connection.password ?? decode(url.password),
  };
}

export interface PoolRole {
  /** A reader's pool: every transaction read-only (default_transaction_read_only=on). */
  readOnly?: boolean;
  /** Connections at most (default: the connection's poolSize). */
  max?: number;
  /**
   * A writer whose commits answer before they reach the server's disk (synchronous_commit=off):
   * for a store whose writes the agent repeats should a database crash lose the last of them.
   * Lost only to a crash of the database server, never to one of the agent.
   */
  unsyncedCommits?: boolean;
}

/**
 * The pg.Pool options for a journal connection. The writer asks for synchronous_commit=on (unless
 * its role says otherwise), so a commit that answered is on the server's disk whatever the
 * database's default (the journal's promise to the pipeline), and for READ COMMITTED: a statement after an advisory lock's sees what
 * the lock's last holder committed, which the claim and the status files rely on, whatever the
 * database's or role's default isolation. A reader's sessions are read-only.
 */
export function poolConfig(connection: PostgresConnection, role: PoolRole = {}): pg.PoolConfig {
  const target = serverTarget(connection);
  const timeout = connection.timeoutMs;
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    database: target.database,
    password: target.password,
    ssl: sslOptions(connection.tls),
    max: role.max ?? connection.poolSize,
    connectionTimeoutMillis: timeout,
    statement_timeout: timeout,
    query_timeout: timeout + QUERY_TIMEOUT_GRACE_MS,
    // A transaction is never left waiting on the agent; one that is (a stalled process) must not hold
    // row locks other agents wait on.
    idle_in_transaction_session_timeout: Math.max(timeout * 3, 30_000),
    application_name: APPLICATION_NAME,
    keepAlive: true,
    types: journalTypeParsers(),
    options: role.readOnly
      ? '-c default_transaction_read_only=on'
      : `-c synchronous_commit=${role.unsyncedCommits ? 'off' : 'on'} -c default_transaction_isolation=read\\ committed`,
  };
}

/**
 * A statement; `name` makes pg prepare it once per connection. `query_timeout` (pg reads it per
 * query) replaces the client's own timer for a statement allowed longer than timeoutMs.
 */
export type Statement = pg.QueryConfig & { query_timeout?: number };

/** A statement allowed `ms` (with the client's timer a little later, as the pool's). */
export function allowing(statement: Statement, ms: number): Statement {
  return { ...statement, query_timeout: ms + QUERY_TIMEOUT_GRACE_MS };
}

/** The statements of one transaction, on its one client. */
export interface Tx {
  rows(statement: Statement, values?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  one(statement: Statement, values?: readonly unknown[]): Promise<Record<string, unknown> | undefined>;
}

/** `BEGIN` for a writing transaction, or a stricter one (a consistent read-only snapshot). */
export type BeginStatement =
  | 'BEGIN'
  | 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'
  // BEGIN and statements without parameters, in one round trip (the simple query protocol): the
  // rows of each are handed to the transaction's function.
  | `BEGIN; SELECT ${string}`;

/** `COMMIT`, or statements without parameters and then COMMIT, in one round trip. */
export type CommitStatement = 'COMMIT' | `${string}; COMMIT`;

/**
 * A pool and what it is for: statements outside a transaction, transactions on one client, the
 * translation of pg's errors. `location` is describeLocation's: never the password.
 */
export class PgSession {
  readonly location: string;
  /** How long a connection attempt or a statement may take (the connection's timeoutMs). */
  readonly timeoutMs: number;
  private readonly secrets: readonly string[];
  private ended = false;

  private constructor(
    private readonly pool: pg.Pool,
    connection: PostgresConnection,
  ) {
    this.location = describeLocation({ kind: 'postgres', connection });
    this.timeoutMs = connection.timeoutMs;
    this.secrets = [connection.password, serverTarget(connection).password].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    );
  }

  static open(connection: PostgresConnection, role: PoolRole = {}, log?: Logger): PgSession {
    const pool = new pg.Pool(poolConfig(connection, role));
    const session = new PgSession(pool, connection);
    // An idle client whose connection dropped (a server restart): without a listener the pool's
    // error event would end the process. The pool drops that client; the next statement connects anew.
    pool.on('error', (err) => {
      const failure = session.failure(err, 'an idle connection');
      log?.warn(
        { location: session.location, code: failure.code, reason: failure.message },
        'journal idle connection lost',
      );
    });
    return session;
  }

  /** One statement on any pooled client (its own implicit transaction). */
  async rows(
    doing: string,
    statement: Statement,
    values?: readonly unknown[],
  ): Promise<Record<string, unknown>[]> {
    try {
      const result = await this.pool.query(withValues(statement, values));
      return result.rows as Record<string, unknown>[];
    } catch (err) {
      throw this.failure(err, doing);
    }
  }

  async one(
    doing: string,
    statement: Statement,
    values?: readonly unknown[],
  ): Promise<Record<string, unknown> | undefined> {
    return (await this.rows(doing, statement, values))[0];
  }

  /**
   * `fn` in one transaction on one client: committed when it resolves (by `commit`, given what it
   * resolved to), rolled back when it throws. A client whose connection broke (or whose rollback
   * failed) is destroyed, not put back. A lost answer to COMMIT is reported with details.outcome
   * 'unknown': the transaction may have committed.
   */
  async transaction<T>(
    doing: string,
    fn: (tx: Tx, begun: Record<string, unknown>[][]) => Promise<T>,
    begin: BeginStatement = 'BEGIN',
    commit: (result: T) => CommitStatement = () => 'COMMIT',
  ): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.failure(err, doing);
    }
    let destroy: Error | undefined;
    // A connection lost between two statements is an 'error' event on the client, which pg-pool
    // does not listen to while the client is out: unheard, it would end the process.
    let lost: Error | undefined;
    const onLost = (err: Error) => {
      lost = err;
    };
    client.on('error', onLost);
    let committing = false;
    try {
      const begun: pg.QueryResult | pg.QueryResult[] = await client.query(begin);
      const result = await fn(
        transactionOf(client),
        (Array.isArray(begun) ? begun : [begun]).map((r) => r.rows as Record<string, unknown>[]),
      );
      committing = true;
      await client.query(commit(result));
      return result;
    } catch (err) {
      const broken = isConnectionBroken(err);
      if (broken) {
        destroy = err instanceof Error ? err : new Error(String(err));
      } else {
        // A COMMIT the server refused has ended the transaction (the ROLLBACK only warns); a
        // statement before it that failed has left it aborted, and the client must not go back so.
        try {
          await client.query('ROLLBACK');
        } catch (rollbackErr) {
          destroy = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
        }
      }
      throw this.failure(err, doing, committing && broken ? { outcome: 'unknown' } : undefined);
    } finally {
      client.removeListener('error', onLost);
      client.release(destroy ?? lost ?? false);
    }
  }

  /** Any error as the DocexError callers see (a DocexError of the journal's own passes unchanged). */
  failure(err: unknown, doing: string, details?: Record<string, unknown>): DocexError {
    return journalFailure(err, { location: this.location, doing, secrets: this.secrets, details });
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.pool.end();
  }
}

function withValues(statement: Statement, values: readonly unknown[] | undefined): Statement {
  return values === undefined ? statement : { ...statement, values: values as unknown[] };
}

function transactionOf(client: pg.PoolClient): Tx {
  const rows = async (statement: Statement, values?: readonly unknown[]) => {
    // Several statements in one text (a migration) answer one result each: the last one counts.
    const result: pg.QueryResult | pg.QueryResult[] = await client.query(withValues(statement, values));
    return ((Array.isArray(result) ? result.at(-1) : result)?.rows ?? []) as Record<string, unknown>[];
  };
  return {
    rows,
    one: async (statement, values) => (await rows(statement, values))[0],
  };
}
