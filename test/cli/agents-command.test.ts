/**
 * `docex-agent agents` as an operator runs it: on a PostgreSQL journal every agent row with its
 * host, pid, version, start, last seen (by the database's clock) and status; on a SQLite journal a
 * sentence saying the journal is one agent's; on a database never migrated, why there is nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerAgentsCommand } from '../../src/cli/agents-command.js';
import { agoText } from '../../src/cli/agents-runner.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { PostgresCluster } from '../../src/journal/postgres/cluster.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { runCli } from './support/run-cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-agents-cli-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function config(extra: Record<string, unknown> = {}): string {
  const file = path.join(dir, `agent-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify({ stateDir: path.join(dir, 'state'), sandbox: { enabled: true }, ...extra }));
  return file;
}

const agents = (file: string) =>
  runCli((program, deps) => registerAgentsCommand(program, deps), ['agents', '--config', file]);

describe('docex-agent agents', () => {
  it('says a SQLite journal is local to one agent, and lists nothing', async () => {
    const run = await agents(config());
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(
      `the journal is local to one agent (${path.join(dir, 'state', 'journal.sqlite')}): no other agent shares it, and there are no heartbeats to list; set journal.url to share a PostgreSQL journal between agents\n`,
    );
    expect(run.stderr).toBe('');
  });

  it('writes how long ago in whole units', () => {
    expect([0, 4_999, 119_000, 120_000, 7_199_000, 7_200_000, 172_800_000].map(agoText)).toEqual([
      '0 s ago',
      '4 s ago',
      '119 s ago',
      '2 min ago',
      '119 min ago',
      '2 h ago',
      '2 d ago',
    ]);
  });
});

describePostgres('docex-agent agents on a PostgreSQL journal', () => {
  let url: string;
  const closing: PostgresCluster[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0)) await c.close();
  });

  const pgConfig = (deadAfter = '60s') =>
    config({ journal: { url, sslmode: 'disable' }, cluster: { heartbeatMs: '20s', deadAfterMs: deadAfter } });

  const agent = (n: number, version: string) => {
    const cluster = PostgresCluster.open(postgresConnection(url), {
      deadAfterMs: 60_000,
      identity: { id: `id-${n}`, host: `host-${n}`, pid: 100 + n, version, place: `host-${n}:/state` },
    });
    closing.push(cluster);
    return cluster;
  };

  beforeEach(async () => {
    url = await testDatabase();
  });

  it('lists each agent with its host, pid, version, start, last seen and status, alive first', async () => {
    const journal = await PostgresJournal.open(postgresConnection(url), {
      clock: new ManualClock(),
      log: silentLogger(),
    });
    await journal.close();
    const [a, b, c] = [agent(1, '0.2.0'), agent(2, '0.1.0'), agent(3, '0.2.0')];
    await Promise.all([a.heartbeat(), b.heartbeat(), c.heartbeat()]);
    await b.markStopped();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Seen 2 minutes ago by the database's clock: dead after 60 s.
      await client.query(`UPDATE agents SET last_seen = now() - interval '125 seconds' WHERE id = 'id-3'`);
    } finally {
      await client.end();
    }
    const run = await agents(pgConfig());
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const [head, columns, rule, ...rows] = run.stdout.trimEnd().split('\n');
    expect(head).toBe(
      `agents on ${url} (alive: a heartbeat within 60 s, by the database's clock): 1 alive, 1 dead, 1 stopped`,
    );
    expect(columns?.split(/\s{2,}/)).toEqual([
      'id',
      'host',
      'pid',
      'version',
      'started',
      'last seen',
      'status',
    ]);
    expect(rule).toMatch(/^-+( +-+)+$/);
    const cells = rows.map((r) => r.split(/\s{2,}/));
    expect(cells.map((r) => [r[0], r[1], r[2], r[3], r[6]])).toEqual([
      ['id-1', 'host-1', '101', '0.2.0', 'alive'],
      ['id-2', 'host-2', '102', '0.1.0', 'stopped'],
      ['id-3', 'host-3', '103', '0.2.0', 'dead'],
    ]);
    expect(cells[0]![5]).toMatch(/^\d s ago$/);
    expect(cells[2]![5]).toBe('2 min ago');
    for (const r of cells) expect(Date.parse(r[4]!)).toBeGreaterThan(Date.parse('2020-01-01'));

    // The reader's cluster.deadAfterMs decides: with 10 minutes, the third is alive again.
    const lenient = await agents(pgConfig('10m'));
    expect(lenient.stdout).toContain('(alive: a heartbeat within 600 s');
    expect(lenient.stdout).toContain('2 alive, 0 dead, 1 stopped');
  });

  it('says why it lists nothing on a database no agent has migrated (exit 1)', async () => {
    const run = await agents(pgConfig());
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^docex-agent agents: DOCEX_JOURNAL_VERSION: the journal at postgres:\/\/.* has no agents table yet/,
    );
  });
});
