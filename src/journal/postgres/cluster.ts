/**
 * The cluster concern (../cluster.ts) on the journal's PostgreSQL database: the agents and
 * cluster_tasks tables of migration 4, on a small pool of its own (a heartbeat must not queue
 * behind the intake's transactions). Every time is the database's: last_seen is the statement's
 * time (statement_timestamp()), and "alive" and "due" are computed in SQL against now(), never
 * against a host's clock, so skew between hosts moves nothing.
 *
 * A periodic task is claimed with one statement (pg-boss's cron): insert the task's row, or take
 * it over when its last run is at least a period old. Of agents claiming at the same moment the
 * first to commit inserts (or updates); the others wait on its row lock, see its fresh last_run
 * and get nothing back.
 */
import { DocexError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import {
  type AgentIdentity,
  type AgentRecord,
  type AgentStatus,
  agentIdentity,
  type ClusterOptions,
  type ClusterReader,
  type ClusterStore,
} from '../cluster.js';
import type { PostgresConnection } from '../location.js';
import { PgSession, type Statement } from './pool.js';
import { MARK_AGENT_STOPPED, newerRefused, PG_SCHEMA_VERSION, REGISTER_AGENT } from './schema.js';

/** Rows of agents not seen for this long go (at an agent's first heartbeat). */
export const AGENT_ROWS_KEPT_DAYS = 7;

const q = (name: string, text: string): Statement => ({ name: `cluster-${name}`, text });

/** `last_seen` within $n ms of the database's now(). */
const seenWithin = (param: string) => `last_seen > now() - make_interval(secs => ${param}::float8 / 1000)`;
const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`;

const S = {
  heartbeat: q('heartbeat', REGISTER_AGENT),
  forget: q('forget', `DELETE FROM agents WHERE last_seen < now() - interval '${AGENT_ROWS_KEPT_DAYS} days'`),
  stopped: q('stopped', MARK_AGENT_STOPPED),
  alive: q('alive', `SELECT count(*) AS n FROM agents WHERE stopped_at IS NULL AND ${seenWithin('$1')}`),
  agents: q(
    'agents',
    `SELECT id, host, pid, version, schema_version, place, ${epochMs('started_at')} AS started_at,
       ${epochMs('last_seen')} AS last_seen, ${epochMs('stopped_at')} AS stopped_at,
       greatest(0, ${epochMs('now()')} - ${epochMs('last_seen')}) AS seen_ago_ms,
       CASE WHEN stopped_at IS NOT NULL THEN 'stopped' WHEN ${seenWithin('$1')} THEN 'alive' ELSE 'dead' END
         AS status
     FROM agents
     ORDER BY (stopped_at IS NULL AND ${seenWithin('$1')}) DESC, last_seen DESC, id`,
  ),
  claim: q(
    'claim',
    `INSERT INTO cluster_tasks (name, owner, last_run) VALUES ($1, $2, now())
     ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, last_run = EXCLUDED.last_run
       WHERE cluster_tasks.last_run <= now() - make_interval(secs => $3::float8 / 1000)
     RETURNING owner`,
  ),
  /** A firing's claim: its nominal time ($3, epoch ms) moves the task's last run forward once. */
  claimFiring: q(
    'claim-firing',
    `INSERT INTO cluster_tasks (name, owner, last_run) VALUES ($1, $2, to_timestamp($3::float8 / 1000))
     ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, last_run = EXCLUDED.last_run
       WHERE cluster_tasks.last_run < EXCLUDED.last_run
     RETURNING owner`,
  ),
  hasAgents: q('has-agents', "SELECT to_regclass('agents') IS NOT NULL AS ok"),
};

const STATUSES: readonly AgentStatus[] = ['alive', 'dead', 'stopped'];

function recordOf(row: Record<string, unknown>): AgentRecord {
  const status = String(row['status']) as AgentStatus;
  if (!STATUSES.includes(status))
    throw new DocexError('DOCEX_INTERNAL', `an agent row with status ${status}`);
  return {
    id: String(row['id']),
    host: String(row['host']),
    pid: Number(row['pid']),
    version: String(row['version']),
    place: row['place'] === null ? '' : String(row['place']),
    schemaVersion: Number(row['schema_version']),
    startedAt: Number(row['started_at']),
    lastSeen: Number(row['last_seen']),
    ...(row['stopped_at'] === null ? {} : { stoppedAt: Number(row['stopped_at']) }),
    seenAgoMs: Number(row['seen_ago_ms']),
    status,
  };
}

/** The agents' rows, read through any session (the agent's own, or a reader's). */
async function readAgents(session: PgSession, deadAfterMs: number): Promise<AgentRecord[]> {
  const exists = await session.one('cluster: agents', S.hasAgents);
  if (exists?.['ok'] !== true) {
    throw new DocexError(
      'DOCEX_JOURNAL_VERSION',
      `the journal at ${session.location} has no agents table yet (it comes with schema version 4): start an agent of this version once, it migrates the journal`,
      { details: { location: session.location } },
    );
  }
  return (await session.rows('cluster: agents', S.agents, [deadAfterMs])).map(recordOf);
}

export class PostgresCluster implements ClusterStore {
  readonly shared = true;
  readonly location: string;
  readonly self: AgentIdentity;
  private written = false;

  private constructor(
    private readonly session: PgSession,
    private readonly deadAfterMs: number,
    identity: AgentIdentity,
  ) {
    this.location = session.location;
    this.self = identity;
  }

  /** Connects (lazily: the first statement does); the journal must already be migrated. */
  static open(connection: PostgresConnection, options: ClusterOptions, log?: Logger): PostgresCluster {
    const session = PgSession.open(connection, { max: Math.min(2, connection.poolSize) }, log);
    return new PostgresCluster(session, options.deadAfterMs, options.identity ?? agentIdentity());
  }

  async heartbeat(): Promise<void> {
    const { id, host, pid, version, place } = this.self;
    const [written] = await this.session.rows('cluster: heartbeat', S.heartbeat, [
      id,
      host,
      pid,
      version,
      PG_SCHEMA_VERSION,
      place,
    ]);
    if (!this.written) {
      this.written = true;
      await this.session.rows('cluster: forget old agents', S.forget);
    }
    // Written all the same: the row says truly that an agent of this version is alive, and holds
    // back the migrations after this one.
    const journalVersion = Number(written?.['journal_version'] ?? 0);
    if (journalVersion > PG_SCHEMA_VERSION) throw newerRefused(journalVersion);
  }

  async markStopped(): Promise<void> {
    await this.session.rows('cluster: stopped', S.stopped, [this.self.id]);
  }

  agents(): Promise<AgentRecord[]> {
    return readAgents(this.session, this.deadAfterMs);
  }

  async agentsAlive(): Promise<number> {
    return Number((await this.session.one('cluster: agents alive', S.alive, [this.deadAfterMs]))?.['n'] ?? 0);
  }

  async claimPeriodicTask(name: string, periodMs: number, firingAt?: number): Promise<boolean> {
    if (firingAt !== undefined) {
      const rows = await this.session.rows(`cluster: claim ${name}`, S.claimFiring, [
        name,
        this.self.id,
        firingAt,
      ]);
      return rows.length > 0;
    }
    if (!(periodMs > 0)) {
      throw new DocexError(
        'DOCEX_INTERNAL',
        `a periodic task's period must be positive: ${name} ${periodMs}`,
      );
    }
    const rows = await this.session.rows(`cluster: claim ${name}`, S.claim, [name, this.self.id, periodMs]);
    return rows.length > 0;
  }

  close(): Promise<void> {
    return this.session.end();
  }
}

/** `docex-agent agents`: one read-only connection, never a write. */
export class PostgresClusterReader implements ClusterReader {
  readonly shared = true;
  readonly location: string;

  private constructor(
    private readonly session: PgSession,
    private readonly deadAfterMs: number,
  ) {
    this.location = session.location;
  }

  static open(connection: PostgresConnection, options: { deadAfterMs: number }): PostgresClusterReader {
    return new PostgresClusterReader(
      PgSession.open(connection, { readOnly: true, max: 1 }),
      options.deadAfterMs,
    );
  }

  agents(): Promise<AgentRecord[]> {
    return readAgents(this.session, this.deadAfterMs);
  }

  close(): Promise<void> {
    return this.session.end();
  }
}
