/**
 * What `docex-agent check` asks of a PostgreSQL journal, answered as plain data (the command only
 * formats it): can this host connect, which schema version is there, how far apart the two clocks
 * are, and whether the user has the rights the agent needs. Read-only: it creates, migrates and
 * writes nothing. A failure to connect is an answer too, its message without the password.
 */
import { type Clock, systemClock } from '../../core/clock.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { isDocexError } from '../../core/errors.js';
import { describeLocation, type PostgresConnection } from '../location.js';
import { PgSession, type Tx } from './pool.js';
import { PG_SCHEMA_VERSION } from './schema.js';

/** The journal's tables and the rights the agent needs on each (prune deletes, moves update). */
export const JOURNAL_TABLE_RIGHTS: Readonly<Record<string, readonly TablePrivilege[]>> = {
  schema_migrations: ['SELECT', 'INSERT'],
  items: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  history: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  inspections: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  // Heartbeats (rows of agents gone for days are deleted) and the claims of periodic tasks.
  agents: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
  cluster_tasks: ['SELECT', 'INSERT', 'UPDATE'],
};

export type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

export interface ProbeOptions {
  /** This host's clock, compared with the database's (default: the system clock). */
  clock?: Clock;
}

export interface ProbeFailure {
  reached: false;
  location: string;
  code: ErrorCode;
  /** Why, naming the server without its password. */
  message: string;
  sqlstate?: string | undefined;
}

export interface ProbeAnswer {
  reached: true;
  location: string;
  /** `15.18`, as the server says it (server_version). */
  serverVersion: string;
  user: string;
  database: string;
  /** The schema the agent's tables go to (current_schema()); undefined when the search path has none. */
  schema: string | undefined;
  journal: {
    /** Whether the database holds a journal (its schema_migrations table). */
    present: boolean;
    /** The schema version recorded (0: none yet); undefined when the user may not read it. */
    version: number | undefined;
    /** The version this agent brings a journal to. */
    known: number;
  };
  clock: {
    /** The database's clock minus this host's (ms): positive when the database is ahead. */
    skewMs: number;
    /** The round trip of the reading (the skew is known to about half of it). */
    roundTripMs: number;
  };
  rights: {
    /** CREATE and USAGE on the schema: the agent creates the tables, and checks them at every start. */
    createOnSchema: boolean;
    usageOnSchema: boolean;
    /** Existing journal tables on which a right the agent needs is missing. */
    missing: { table: string; privileges: TablePrivilege[] }[];
    /** Who owns the items table (undefined: none yet), and whether the user acts as that role. */
    tableOwner: string | undefined;
    ownsTables: boolean | undefined;
  };
}

export type PostgresProbe = ProbeFailure | ProbeAnswer;

const SERVER = `SELECT current_setting('server_version') AS version, current_user AS "user",
  current_database() AS database, current_schema() AS schema`;
/** The server's clock, in ms since the epoch, at the moment it runs (not the transaction's start). */
const SERVER_CLOCK = 'SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS ms';

async function journalVersion(tx: Tx): Promise<Omit<ProbeAnswer['journal'], 'known'>> {
  const row = await tx.one({
    text: `SELECT to_regclass('schema_migrations') IS NOT NULL AS present,
      has_table_privilege(to_regclass('schema_migrations'), 'SELECT') AS readable`,
  });
  if (row?.['present'] !== true) return { present: false, version: 0 };
  if (row['readable'] !== true) return { present: true, version: undefined };
  const v = await tx.one({ text: 'SELECT coalesce(max(version), 0) AS v FROM schema_migrations' });
  return { present: true, version: Number(v?.['v'] ?? 0) };
}

async function clockSkew(tx: Tx, clock: Clock): Promise<ProbeAnswer['clock']> {
  // The statement is prepared on the first run: the second reading is the one that counts.
  let best: ProbeAnswer['clock'] | undefined;
  for (let i = 0; i < 3; i++) {
    const before = clock.now();
    const server = Number((await tx.one({ text: SERVER_CLOCK }))?.['ms']);
    const after = clock.now();
    const reading = { skewMs: server - (before + after) / 2, roundTripMs: after - before };
    if (best === undefined || reading.roundTripMs < best.roundTripMs) best = reading;
  }
  return best!;
}

async function rightsOf(tx: Tx, schema: string | undefined): Promise<ProbeAnswer['rights']> {
  const onSchema = schema
    ? await tx.one(
        {
          text: `SELECT has_schema_privilege($1, 'CREATE') AS create, has_schema_privilege($1, 'USAGE') AS usage`,
        },
        [schema],
      )
    : undefined;
  const missing: ProbeAnswer['rights']['missing'] = [];
  for (const [table, privileges] of Object.entries(JOURNAL_TABLE_RIGHTS)) {
    const rows = await tx.rows(
      {
        text: `SELECT p AS privilege, has_table_privilege(c.oid, p) AS granted
          FROM (SELECT to_regclass($1) AS oid) c, unnest($2::text[]) AS p WHERE c.oid IS NOT NULL`,
      },
      [table, privileges],
    );
    const lacking = rows.filter((r) => r['granted'] !== true).map((r) => r['privilege'] as TablePrivilege);
    if (lacking.length > 0) missing.push({ table, privileges: lacking });
  }
  const owner = await tx.one({
    text: `SELECT pg_get_userbyid(relowner) AS owner, pg_has_role(current_user, relowner, 'USAGE') AS acts
      FROM pg_class WHERE oid = to_regclass('items')`,
  });
  return {
    createOnSchema: onSchema?.['create'] === true,
    usageOnSchema: onSchema?.['usage'] === true,
    missing,
    tableOwner: owner ? String(owner['owner']) : undefined,
    ownsTables: owner ? owner['acts'] === true : undefined,
  };
}

/** Connects once (one connection, read-only) and answers what `check` shows. */
export async function probePostgres(
  connection: PostgresConnection,
  options: ProbeOptions = {},
): Promise<PostgresProbe> {
  const clock = options.clock ?? systemClock;
  let session: PgSession;
  try {
    session = PgSession.open(connection, { readOnly: true, max: 1 });
  } catch (err) {
    return failureOf(connection, err);
  }
  try {
    return await session.transaction(
      'probe',
      async (tx): Promise<ProbeAnswer> => {
        const server = (await tx.one({ text: SERVER }))!;
        const schema = server['schema'] === null ? undefined : String(server['schema']);
        return {
          reached: true,
          location: session.location,
          serverVersion: String(server['version']),
          user: String(server['user']),
          database: String(server['database']),
          schema,
          journal: { ...(await journalVersion(tx)), known: PG_SCHEMA_VERSION },
          clock: await clockSkew(tx, clock),
          rights: await rightsOf(tx, schema),
        };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  } catch (err) {
    const failure = session.failure(err, 'probe');
    return {
      reached: false,
      location: session.location,
      code: failure.code,
      message: failure.message,
      sqlstate: failure.details?.['sqlstate'] as string | undefined,
    };
  } finally {
    await session.end().catch(() => undefined);
  }
}

/** A connection that could not even be set up (its URL unreadable): an answer like a refusal. */
function failureOf(connection: PostgresConnection, err: unknown): ProbeFailure {
  return {
    reached: false,
    location: describeLocation({ kind: 'postgres', connection }),
    code: isDocexError(err) ? err.code : 'DOCEX_CONFIG_INVALID',
    message: err instanceof Error ? err.message : String(err),
  };
}
