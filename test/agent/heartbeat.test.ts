/**
 * The agent's cluster part: on a PostgreSQL journal it writes its heartbeat at start and every
 * heartbeatMs and marks the agent stopped at a graceful stop; a heartbeat that fails is one
 * warning, not a failure of the agent; on a SQLite journal it writes nothing. Waits are on
 * conditions (the row's last_seen, calls counted), never fixed sleeps.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterPart } from '../../src/agent/heartbeat.js';
import { ManualClock } from '../../src/core/clock.js';
import { DocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import { type ClusterStore, LocalCluster } from '../../src/journal/cluster.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { captureLogger } from '../api/support/log-capture.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';

const CONFIG = {
  heartbeatMs: 20,
  deadAfterMs: 60_000,
  leaseMs: 60_000,
  renewMs: 20_000,
  createMarginMs: 10_000,
};
const IDENTITY = {
  id: 'agent-under-test',
  host: 'host-a',
  pid: 4242,
  version: '9.9.9',
  place: 'host-a:/state',
};

const parts: ClusterPart[] = [];
afterEach(async () => {
  for (const part of parts.splice(0)) await part.stop();
});

/** A store whose heartbeats fail while `down` is set, counting every call. */
function flakyStore(): ClusterStore & { down: boolean; beats: number; stoppedCalls: number } {
  const local = new LocalCluster('test', IDENTITY, 4);
  const store = {
    shared: true,
    location: 'postgres://test',
    self: IDENTITY,
    down: true,
    beats: 0,
    stoppedCalls: 0,
    async heartbeat() {
      store.beats++;
      if (store.down) throw new DocexError('DOCEX_JOURNAL_UNAVAILABLE', 'the journal at test: down');
    },
    async markStopped() {
      store.stoppedCalls++;
      if (store.down) throw new DocexError('DOCEX_JOURNAL_UNAVAILABLE', 'the journal at test: down');
    },
    agents: () => local.agents(),
    agentsAlive: () => local.agentsAlive(),
    claimPeriodicTask: async () => true,
    close: async () => {},
  };
  return store;
}

describe('the cluster part', () => {
  it('on a SQLite journal writes nothing and counts this agent alone', async () => {
    const part = new ClusterPart({
      location: { kind: 'sqlite', file: '/tmp/nowhere/journal.sqlite' },
      config: CONFIG,
      log: silentLogger(),
    });
    parts.push(part);
    await part.start();
    expect(part.cluster.shared).toBe(false);
    expect(await part.cluster.agentsAlive()).toBe(1);
    expect(await part.claim('retention:journal', 1_000)).toBe(true);
  });

  it('tallies each task claim as ran here or left to another agent, by task (docex_cluster_tasks_total)', async () => {
    const store = flakyStore();
    store.down = false;
    const wins = [true, false, false, true];
    store.claimPeriodicTask = async () => wins.shift() ?? false;
    const part = new ClusterPart({
      location: { kind: 'sqlite', file: 'x' },
      config: CONFIG,
      log: silentLogger(),
      open: async () => store,
    });
    parts.push(part);
    await part.start();
    for (let i = 0; i < 3; i++) await part.claim('returns:follow-sweep', 1_000);
    await part.claim('retention:journal', 1_000);
    expect(Object.fromEntries(part.taskClaims)).toEqual({
      'returns:follow-sweep': { ran: 1, left: 2 },
      'retention:journal': { ran: 1, left: 0 },
    });
  });

  it('says once, at error, that a newer agent migrated the journal past this one’s version, and tells the agent once', async () => {
    const { log, lines } = captureLogger('info');
    const told: string[] = [];
    const store = flakyStore();
    store.down = false;
    store.heartbeat = async () => {
      store.beats++;
      throw new DocexError(
        'DOCEX_JOURNAL_VERSION',
        'the journal has schema version 7; this agent knows up to 6',
      );
    };
    const part = new ClusterPart({
      location: { kind: 'sqlite', file: 'x' },
      config: CONFIG,
      log,
      open: async () => store,
      onNewerSchema: (err) => told.push(err.code),
    });
    parts.push(part);
    await part.start();
    await waitFor(() => store.beats >= 4);
    expect(told).toEqual(['DOCEX_JOURNAL_VERSION']);
    const said = lines().filter((l) =>
      String(l['msg']).startsWith('cluster: a newer agent migrated the journal'),
    );
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 'error', code: 'DOCEX_JOURNAL_VERSION', deadAfterMs: 60_000 });
    // Not an outage: the heartbeat was written.
    expect(lines().some((l) => String(l['msg']).startsWith('cluster heartbeat failed'))).toBe(false);
  });

  it('warns once while heartbeats fail, keeps trying, says so when one is written again, and stops cleanly', async () => {
    const { log, lines } = captureLogger('info');
    const store = flakyStore();
    const part = new ClusterPart({
      location: { kind: 'sqlite', file: 'x' },
      config: CONFIG,
      log,
      open: async () => store,
    });
    parts.push(part);
    // The first heartbeat fails at start: not fatal.
    await part.start();
    await waitFor(() => store.beats >= 5);
    const warned = () => lines().filter((l) => l['msg']?.toString().startsWith('cluster heartbeat failed'));
    expect(warned()).toHaveLength(1);
    expect(warned()[0]).toMatchObject({
      level: 'warn',
      code: 'DOCEX_JOURNAL_UNAVAILABLE',
      deadAfterMs: 60_000,
    });
    store.down = false;
    await waitFor(() => lines().some((l) => l['msg'] === 'cluster heartbeat written again'));
    const beats = store.beats;
    await waitFor(() => store.beats >= beats + 3);
    expect(lines().filter((l) => l['msg'] === 'cluster heartbeat written again')).toHaveLength(1);
    // A goodbye that fails is a warning too, never a failed stop.
    store.down = true;
    parts.splice(0);
    await part.stop();
    expect(store.stoppedCalls).toBe(1);
    expect(
      lines().some((l) => String(l['msg']).startsWith('cluster: marking this agent stopped failed')),
    ).toBe(true);
    // No heartbeat after stop: the timer is gone (a beat in flight was awaited).
    const after = store.beats;
    await part.stop();
    expect(store.beats).toBe(after);
  });
});

describePostgres('the cluster part on a PostgreSQL journal', () => {
  it('writes the heartbeat at start and every heartbeatMs, and marks the agent stopped at stop', async () => {
    const url = await testDatabase();
    const journal = await PostgresJournal.open(postgresConnection(url), {
      clock: new ManualClock(),
      log: silentLogger(),
    });
    await journal.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { log, lines } = captureLogger('info');
      const part = new ClusterPart({
        location: { kind: 'postgres', connection: postgresConnection(url) },
        config: CONFIG,
        log,
        identity: IDENTITY,
      });
      parts.push(part);
      await part.start();
      expect(lines().find((l) => l['msg'] === 'cluster heartbeat started')).toMatchObject({
        agentId: IDENTITY.id,
        host: 'host-a',
        pid: 4242,
        version: '9.9.9',
        heartbeatMs: 20,
        deadAfterMs: 60_000,
      });
      const row = async () =>
        (
          await client.query(
            `SELECT host, pid, version, stopped_at IS NOT NULL AS stopped,
               extract(epoch FROM now() - last_seen) AS ago FROM agents WHERE id = $1`,
            [IDENTITY.id],
          )
        ).rows[0];
      expect(await row()).toMatchObject({ host: 'host-a', pid: 4242, version: '9.9.9', stopped: false });
      // Set the heartbeat a minute back: the next one brings it to the database's now().
      await client.query(`UPDATE agents SET last_seen = now() - interval '1 minute' WHERE id = $1`, [
        IDENTITY.id,
      ]);
      await waitFor(async () => Number((await row()).ago) < 10);
      expect(await part.cluster.agentsAlive()).toBe(1);
      parts.splice(0);
      await part.stop();
      expect(await row()).toMatchObject({ stopped: true });
      expect(lines().filter((l) => l['level'] === 'warn')).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
