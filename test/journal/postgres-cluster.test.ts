/**
 * The cluster groundwork on a real PostgreSQL server (a fresh database per test): agents' heartbeat
 * rows and their status (alive, stopped, dead) computed with the database's clock, periodic tasks
 * claimed once across agents per period, and the rolling-upgrade guard of the migrations. Time
 * is moved in SQL (last_seen, last_run set back), never waited for.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { isDocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { type AgentIdentity, LocalCluster } from '../../src/journal/cluster.js';
import { openCluster, openClusterReader } from '../../src/journal/open.js';
import {
  AGENT_ROWS_KEPT_DAYS,
  PostgresCluster,
  PostgresClusterReader,
} from '../../src/journal/postgres/cluster.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { PgSession, postgresConnection } from '../../src/journal/postgres/pool.js';
import {
  LOCK_SPACE,
  MIGRATIONS,
  migrate,
  PG_SCHEMA_VERSION,
  type PgMigration,
} from '../../src/journal/postgres/schema.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';

const DEAD_AFTER_MS = 60_000;
/** A migration after the agent's last, which agents of version 4 would not survive. */
const BREAKING: PgMigration = { version: PG_SCHEMA_VERSION + 1, sql: 'CREATE TABLE guard_probe (x INTEGER)' };

const identity = (n: number, version = '0.1.0'): AgentIdentity => ({
  id: `agent-${n}-${Math.random().toString(36).slice(2, 8)}`,
  host: `host-${n}`,
  pid: 1000 + n,
  version,
  place: `host-${n}:/state`,
});

describe('the cluster on a SQLite journal (one agent)', () => {
  it('is this agent alone: alive, every task its own, a reader with nothing shared', async () => {
    const cluster = await openCluster(
      { kind: 'sqlite', file: '/tmp/none/journal.sqlite' },
      {
        deadAfterMs: DEAD_AFTER_MS,
        identity: identity(1),
      },
    );
    expect(cluster).toBeInstanceOf(LocalCluster);
    expect(cluster.shared).toBe(false);
    await cluster.heartbeat();
    expect(await cluster.agentsAlive()).toBe(1);
    expect(await cluster.claimPeriodicTask('retention:journal', 1_000)).toBe(true);
    expect(await cluster.claimPeriodicTask('retention:journal', 1_000)).toBe(true);
    expect((await cluster.agents()).map((a) => [a.host, a.status])).toEqual([['host-1', 'alive']]);
    await cluster.markStopped();
    expect(await cluster.agentsAlive()).toBe(0);
    const reader = await openClusterReader(
      { kind: 'sqlite', file: '/tmp/none/journal.sqlite' },
      {
        deadAfterMs: DEAD_AFTER_MS,
      },
    );
    expect(reader.shared).toBe(false);
    expect(await reader.agents()).toEqual([]);
  });
});

describePostgres('the cluster on a PostgreSQL journal', () => {
  let url: string;
  let client: pg.Client;
  const closing: { close(): Promise<void> }[] = [];

  beforeEach(async () => {
    url = await testDatabase();
    const journal = await PostgresJournal.open(postgresConnection(url), {
      clock: new ManualClock(),
      log: silentLogger(),
    });
    await journal.close();
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterEach(async () => {
    for (const c of closing.splice(0)) await c.close().catch(() => undefined);
    await client?.end();
  });

  const agent = (n: number, version?: string): PostgresCluster => {
    const cluster = PostgresCluster.open(postgresConnection(url), {
      deadAfterMs: DEAD_AFTER_MS,
      identity: identity(n, version),
    });
    closing.push(cluster);
    return cluster;
  };
  const seenBack = (a: PostgresCluster, ms: number) =>
    client.query(`UPDATE agents SET last_seen = last_seen - make_interval(secs => $2) WHERE id = $1`, [
      a.self.id,
      ms / 1000,
    ]);

  it('keeps a row per agent: two heartbeats are two alive agents, with host, pid, version and schema', async () => {
    const [a, b] = [agent(1), agent(2, '0.2.0')];
    await Promise.all([a.heartbeat(), b.heartbeat()]);
    expect(await a.agentsAlive()).toBe(2);
    const listed = await b.agents();
    expect(listed.map((r) => [r.id, r.host, r.pid, r.version, r.schemaVersion, r.status]).sort()).toEqual(
      [
        [a.self.id, 'host-1', 1001, '0.1.0', PG_SCHEMA_VERSION, 'alive'],
        [b.self.id, 'host-2', 1002, '0.2.0', PG_SCHEMA_VERSION, 'alive'],
      ].sort(),
    );
    for (const r of listed) {
      expect(r.stoppedAt).toBeUndefined();
      expect(r.seenAgoMs).toBeGreaterThanOrEqual(0);
      expect(r.seenAgoMs).toBeLessThan(5_000);
      expect(r.lastSeen).toBeGreaterThanOrEqual(r.startedAt);
    }
    // A heartbeat moves last_seen to the database's now(), and never started_at.
    await seenBack(a, 30_000);
    const before = (await a.agents()).find((r) => r.id === a.self.id)!;
    expect(before.seenAgoMs).toBeGreaterThanOrEqual(30_000);
    await a.heartbeat();
    const after = (await a.agents()).find((r) => r.id === a.self.id)!;
    expect(after.seenAgoMs).toBeLessThan(5_000);
    expect(after.startedAt).toBe(before.startedAt);
    const rows = await client.query('SELECT count(*)::int AS n FROM agents');
    expect(rows.rows[0].n).toBe(2);
  });

  it('counts an agent that stopped as stopped, and one not heard from for deadAfterMs as dead', async () => {
    const [a, b, c] = [agent(1), agent(2), agent(3)];
    await Promise.all([a.heartbeat(), b.heartbeat(), c.heartbeat()]);
    await b.markStopped();
    await seenBack(c, DEAD_AFTER_MS + 1_000);
    const status = Object.fromEntries((await a.agents()).map((r) => [r.host, r.status]));
    expect(status).toEqual({ 'host-1': 'alive', 'host-2': 'stopped', 'host-3': 'dead' });
    expect(await a.agentsAlive()).toBe(1);
    // Alive first, then the most recently seen.
    expect((await a.agents()).map((r) => r.host)).toEqual(['host-1', 'host-2', 'host-3']);
    const stopped = (await a.agents()).find((r) => r.host === 'host-2')!;
    expect(stopped.stoppedAt).toBeGreaterThanOrEqual(stopped.startedAt);
    // Just inside deadAfterMs is still alive (the boundary is the database's now()).
    await client.query('UPDATE agents SET last_seen = now() - make_interval(secs => $2) WHERE id = $1', [
      c.self.id,
      DEAD_AFTER_MS / 1000 - 5,
    ]);
    expect(await a.agentsAlive()).toBe(2);
  });

  it('forgets agents not seen for days at a new agent’s first heartbeat', async () => {
    const old = agent(1);
    await old.heartbeat();
    await seenBack(old, (AGENT_ROWS_KEPT_DAYS + 1) * 86_400_000);
    const recent = agent(2);
    await recent.heartbeat();
    await seenBack(recent, 86_400_000);
    await agent(3).heartbeat();
    expect((await recent.agents()).map((r) => r.host).sort()).toEqual(['host-2', 'host-3']);
  });

  it('an agent whose row is being forgotten while it beats writes its row again once the forgetting commits', async () => {
    const stale = agent(1);
    await stale.heartbeat();
    await seenBack(stale, (AGENT_ROWS_KEPT_DAYS + 1) * 86_400_000);
    // Another agent's first heartbeat forgets it (as S.forget does), not committed yet.
    const forgetting = new pg.Client({ connectionString: url });
    await forgetting.connect();
    closing.push({ close: () => forgetting.end() });
    await forgetting.query('BEGIN');
    const forgotten = await forgetting.query(
      `DELETE FROM agents WHERE last_seen < now() - interval '${AGENT_ROWS_KEPT_DAYS} days'`,
    );
    expect(forgotten.rowCount).toBe(1);
    const beat = stale.heartbeat();
    // Its heartbeat waits on the row the other transaction deleted.
    await waitFor(
      async () =>
        (
          await client.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'transactionid'",
          )
        ).rows[0].n === 1,
    );
    await forgetting.query('COMMIT');
    await beat;
    expect((await stale.agents()).map((r) => [r.id, r.status])).toEqual([[stale.self.id, 'alive']]);
  });

  it('lets a reader list the agents on a read-only connection', async () => {
    const a = agent(1);
    await a.heartbeat();
    const reader = PostgresClusterReader.open(postgresConnection(url), { deadAfterMs: DEAD_AFTER_MS });
    closing.push(reader);
    expect((await reader.agents()).map((r) => r.id)).toEqual([a.self.id]);
    const session = PgSession.open(postgresConnection(url), { readOnly: true, max: 1 });
    closing.push({ close: () => session.end() });
    await expect(session.rows('write', { text: 'DELETE FROM agents' })).rejects.toThrow(/read-only/);
  });

  it('says there is no agents table on a database the agent never migrated', async () => {
    const empty = await testDatabase();
    const reader = PostgresClusterReader.open(postgresConnection(empty), { deadAfterMs: DEAD_AFTER_MS });
    closing.push(reader);
    const err = await reader.agents().catch((e: unknown) => e);
    expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
    expect((err as Error).message).toMatch(/no agents table yet/);
  });

  describe('claimPeriodicTask', () => {
    const PERIOD_MS = 3_600_000;
    const runBack = (name: string, ms: number) =>
      client.query(
        'UPDATE cluster_tasks SET last_run = last_run - make_interval(secs => $2) WHERE name = $1',
        [name, ms / 1000],
      );

    it('gives the task to exactly one of the agents claiming at once, then to nobody until a period has passed', async () => {
      const agents = [1, 2, 3, 4, 5].map((n) => agent(n));
      const round = async () => {
        // Several claims per agent, all in flight together.
        const claims = agents.flatMap((a) => [1, 2].map(() => a.claimPeriodicTask('csv', PERIOD_MS)));
        return (await Promise.all(claims)).filter(Boolean).length;
      };
      expect(await round()).toBe(1);
      expect(await round()).toBe(0);
      // Just short of the period (by the database's clock): still nobody.
      await runBack('csv', PERIOD_MS - 60_000);
      expect(await round()).toBe(0);
      await runBack('csv', 60_000);
      expect(await round()).toBe(1);
      expect(await round()).toBe(0);
      const owners = await client.query('SELECT owner FROM cluster_tasks');
      expect(agents.map((a) => a.self.id)).toContain(owners.rows[0].owner);
    });

    it('gives each firing of a scheduled task to exactly one agent, however late the claims of the one before came', async () => {
      const agents = [1, 2, 3].map((n) => agent(n));
      const firing = (at: number) =>
        Promise.all(agents.map((a) => a.claimPeriodicTask('returns:follow-sweep', 4_000, at)));
      const t = Date.UTC(2026, 10, 27, 12, 0, 0);
      expect((await firing(t)).filter(Boolean)).toHaveLength(1);
      // The next firing 5 s on, right after (the claims of `t` came late): still exactly one.
      expect((await firing(t + 5_000)).filter(Boolean)).toHaveLength(1);
      expect((await firing(t + 5_000)).filter(Boolean)).toHaveLength(0);
      // A late claim of a firing older than the last one claimed: nobody.
      expect((await firing(t)).filter(Boolean)).toHaveLength(0);
      expect((await firing(t + 10_000)).filter(Boolean)).toHaveLength(1);
    });

    it('keeps each task apart, and refuses a period that is not positive', async () => {
      const [a, b] = [agent(1), agent(2)];
      expect(await a.claimPeriodicTask('retention:journal', PERIOD_MS)).toBe(true);
      expect(await b.claimPeriodicTask('returns:daily-csv', PERIOD_MS)).toBe(true);
      expect(await b.claimPeriodicTask('retention:journal', PERIOD_MS)).toBe(false);
      // The owner is no exception: once per period means once, whoever asks.
      expect(await a.claimPeriodicTask('retention:journal', PERIOD_MS)).toBe(false);
      const err = await a.claimPeriodicTask('x', 0).catch((e: unknown) => e);
      expect(isDocexError(err, 'DOCEX_INTERNAL')).toBe(true);
    });
  });

  describe('the rolling-upgrade guard', () => {
    const session = () => {
      const s = PgSession.open(postgresConnection(url), { max: 1 });
      closing.push({ close: () => s.end() });
      return s;
    };
    const version = async () =>
      (await client.query('SELECT max(version)::int AS v FROM schema_migrations')).rows[0].v as number;
    const probeTable = async () =>
      (await client.query("SELECT to_regclass('guard_probe') IS NOT NULL AS ok")).rows[0].ok as boolean;

    it('refuses a migration that is not additive while an agent of an older version is alive, and names it', async () => {
      const old = agent(7, '0.1.0');
      await old.heartbeat();
      const err = await migrate(session(), 0, {
        deadAfterMs: DEAD_AFTER_MS,
        migrations: [...MIGRATIONS, BREAKING],
      }).catch((e: unknown) => e);
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      const message = (err as Error).message;
      expect(message).toContain(`the journal has schema version ${PG_SCHEMA_VERSION}`);
      expect(message).toContain(`would migrate it to ${BREAKING.version}`);
      expect(message).toContain(`migration ${BREAKING.version} is not additive`);
      expect(message).toContain('host host-7, pid 1007, version 0.1.0');
      expect((err as { details?: unknown }).details).toMatchObject({
        current: PG_SCHEMA_VERSION,
        known: BREAKING.version,
        alive: [{ host: 'host-7', pid: 1007, version: '0.1.0' }],
      });
      // Nothing was applied.
      expect(await version()).toBe(PG_SCHEMA_VERSION);
      expect(await probeTable()).toBe(false);
    });

    it('migrates once the older agent is dead (no heartbeat for deadAfterMs)', async () => {
      const old = agent(7);
      await old.heartbeat();
      await seenBack(old, DEAD_AFTER_MS + 1_000);
      expect(
        await migrate(session(), 0, { deadAfterMs: DEAD_AFTER_MS, migrations: [...MIGRATIONS, BREAKING] }),
      ).toEqual([BREAKING.version]);
      expect(await probeTable()).toBe(true);
    });

    it('migrates once the older agent has stopped', async () => {
      const old = agent(7);
      await old.heartbeat();
      await old.markStopped();
      expect(
        await migrate(session(), 0, { deadAfterMs: DEAD_AFTER_MS, migrations: [...MIGRATIONS, BREAKING] }),
      ).toEqual([BREAKING.version]);
    });

    it('migrates beside a live older agent when every pending migration is additive', async () => {
      await agent(7).heartbeat();
      const additive = { ...BREAKING, additive: true };
      expect(
        await migrate(session(), 0, { deadAfterMs: DEAD_AFTER_MS, migrations: [...MIGRATIONS, additive] }),
      ).toEqual([additive.version]);
      expect(await probeTable()).toBe(true);
    });

    it('is not held up by a live agent that already knows the new version', async () => {
      await client.query(
        `INSERT INTO agents (id, host, pid, version, schema_version) VALUES ('same', 'h', 1, '0.2.0', $1)`,
        [BREAKING.version],
      );
      expect(
        await migrate(session(), 0, { deadAfterMs: DEAD_AFTER_MS, migrations: [...MIGRATIONS, BREAKING] }),
      ).toEqual([BREAKING.version]);
    });

    it('without deadAfterMs (no configuration), counts every agent not marked stopped as alive', async () => {
      const old = agent(7);
      await old.heartbeat();
      await seenBack(old, 30 * 86_400_000);
      const err = await migrate(session(), 0, { migrations: [...MIGRATIONS, BREAKING] }).catch(
        (e: unknown) => e,
      );
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
    });

    /** An agent of the running version opening its journal, as the agent does at start. */
    const openAs = (who: AgentIdentity) =>
      PostgresJournal.open(postgresConnection(url), {
        clock: new ManualClock(),
        log: silentLogger(),
        deadAfterMs: DEAD_AFTER_MS,
        agent: who,
      });
    const newer = () =>
      migrate(session(), 0, { deadAfterMs: DEAD_AFTER_MS, migrations: [...MIGRATIONS, BREAKING] });
    /** Sessions waiting for the schema lock (migrate's first statement). */
    const waitingForSchemaLock = async () =>
      (
        await client.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::oid AND objid = 1 AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [LOCK_SPACE.schema],
        )
      ).rows[0].n as number;

    it('counts an agent as alive from its journal’s open, before its first heartbeat: a newer agent migrating in between is refused', async () => {
      const old = identity(7, '0.1.0');
      closing.push(await openAs(old));
      const err = await newer().catch((e: unknown) => e);
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      expect((err as Error).message).toContain('host host-7, pid 1007, version 0.1.0');
      expect(await probeTable()).toBe(false);
      // Its heartbeats then keep that one row.
      const cluster = PostgresCluster.open(postgresConnection(url), {
        deadAfterMs: DEAD_AFTER_MS,
        identity: old,
      });
      closing.push(cluster);
      await cluster.heartbeat();
      expect((await cluster.agents()).map((r) => [r.id, r.schemaVersion, r.status])).toEqual([
        [old.id, PG_SCHEMA_VERSION, 'alive'],
      ]);
    });

    it('an older agent that takes the schema lock first is seen by a newer one queued behind it, which refuses', async () => {
      // The test holds the schema lock; the older agent queues for it, then the newer one.
      await client.query(`SELECT pg_advisory_lock(${LOCK_SPACE.schema}, 1)`);
      const old = openAs(identity(7, '0.1.0'));
      await waitFor(async () => (await waitingForSchemaLock()) === 1);
      const migrating = newer().catch((e: unknown) => e);
      await waitFor(async () => (await waitingForSchemaLock()) === 2);
      const released = (await client.query('SELECT clock_timestamp() AS at')).rows[0].at as Date;
      await client.query(`SELECT pg_advisory_unlock(${LOCK_SPACE.schema}, 1)`);
      closing.push(await old);
      expect(isDocexError(await migrating, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      // Seen as of its registration, after its wait for the lock, not as of its transaction's start.
      const seen = (await client.query('SELECT last_seen FROM agents')).rows[0].last_seen as Date;
      expect(seen.getTime()).toBeGreaterThanOrEqual(released.getTime());
      expect(await version()).toBe(PG_SCHEMA_VERSION);
      expect(await probeTable()).toBe(false);
    });

    it('an older agent starting while a newer one is inside its migration waits for it, then refuses the newer schema', async () => {
      // The newer agent's migration waits on a lock the test holds: it is past the guard, not committed.
      const HOLD = 0x7e57;
      await client.query(`SELECT pg_advisory_lock(${HOLD})`);
      const held = { ...BREAKING, sql: `${BREAKING.sql}; SELECT pg_advisory_xact_lock(${HOLD})` };
      const migrating = migrate(session(), 0, {
        deadAfterMs: DEAD_AFTER_MS,
        migrations: [...MIGRATIONS, held],
      });
      await waitFor(
        async () =>
          (
            await client.query(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::oid AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
              [HOLD],
            )
          ).rows[0].n === 1,
      );
      const old = openAs(identity(7, '0.1.0')).catch((e: unknown) => e);
      await waitFor(async () => (await waitingForSchemaLock()) === 1);
      await client.query(`SELECT pg_advisory_unlock(${HOLD})`);
      expect(await migrating).toEqual([BREAKING.version]);
      const err = await old;
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      expect((err as Error).message).toContain(
        `schema version ${BREAKING.version}; this agent knows up to ${PG_SCHEMA_VERSION}`,
      );
      // It left no row behind that would count as a live agent.
      expect((await client.query('SELECT count(*)::int AS n FROM agents')).rows[0].n).toBe(0);
    });

    it('an older agent counted as dead while a newer one migrated: its next heartbeat writes its row and rejects with the newer schema version', async () => {
      const old = agent(7, '0.1.0');
      await old.heartbeat();
      await seenBack(old, DEAD_AFTER_MS + 1_000);
      expect(await newer()).toEqual([BREAKING.version]);
      const err = await old.heartbeat().catch((e: unknown) => e);
      expect(isDocexError(err, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      expect((err as Error).message).toContain(
        `schema version ${BREAKING.version}; this agent knows up to ${PG_SCHEMA_VERSION}`,
      );
      // Alive again in the table, with the version it knows: a later migration that is not
      // additive is held back by it.
      expect((await old.agents()).map((r) => [r.id, r.schemaVersion, r.status])).toEqual([
        [old.self.id, PG_SCHEMA_VERSION, 'alive'],
      ]);
      const later: PgMigration = {
        version: BREAKING.version + 1,
        sql: 'CREATE TABLE guard_later (x INTEGER)',
      };
      const refused = await migrate(session(), 0, {
        deadAfterMs: DEAD_AFTER_MS,
        migrations: [...MIGRATIONS, BREAKING, later],
      }).catch((e: unknown) => e);
      expect(isDocexError(refused, 'DOCEX_JOURNAL_VERSION')).toBe(true);
      expect((refused as Error).message).toContain('host host-7');
    });

    it('an agent whose journal fails to open after the schema check leaves its row stopped: it holds no migration back', async () => {
      // The open reads the unfinished files after the schema check: make that read fail.
      await client.query('ALTER TABLE items RENAME COLUMN epoch TO epoch_gone');
      const old = identity(7, '0.1.0');
      await expect(openAs(old)).rejects.toThrow();
      const rows = await client.query('SELECT id, stopped_at IS NOT NULL AS stopped FROM agents');
      expect(rows.rows).toEqual([{ id: old.id, stopped: true }]);
      await client.query('ALTER TABLE items RENAME COLUMN epoch_gone TO epoch');
      expect(await newer()).toEqual([BREAKING.version]);
    });

    it('two newer agents starting at once: the first migrates, the second waits for it, finds nothing to do and is not held back by it', async () => {
      await client.query(`SELECT pg_advisory_lock(${LOCK_SPACE.schema}, 1)`);
      const first = migrate(session(), 0, {
        deadAfterMs: DEAD_AFTER_MS,
        migrations: [...MIGRATIONS, BREAKING],
        agent: identity(1, '0.2.0'),
      });
      await waitFor(async () => (await waitingForSchemaLock()) === 1);
      const second = migrate(session(), 0, {
        deadAfterMs: DEAD_AFTER_MS,
        migrations: [...MIGRATIONS, BREAKING],
        agent: identity(2, '0.2.0'),
      });
      await waitFor(async () => (await waitingForSchemaLock()) === 2);
      await client.query(`SELECT pg_advisory_unlock(${LOCK_SPACE.schema}, 1)`);
      expect([await first, await second]).toEqual([[BREAKING.version], []]);
      const rows = await client.query('SELECT host, schema_version FROM agents ORDER BY host');
      expect(rows.rows).toEqual([
        { host: 'host-1', schema_version: BREAKING.version },
        { host: 'host-2', schema_version: BREAKING.version },
      ]);
    });

    it('lets the journal open as before: migration 4 is additive, nothing pending is guarded', async () => {
      await agent(7).heartbeat();
      const journal = await PostgresJournal.open(postgresConnection(url), {
        clock: new ManualClock(),
        log: silentLogger(),
        deadAfterMs: DEAD_AFTER_MS,
      });
      await journal.close();
      expect(MIGRATIONS.find((m) => m.version === 4)?.additive).toBe(true);
    });
  });
});
