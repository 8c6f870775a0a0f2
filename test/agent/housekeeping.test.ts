import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Housekeeping,
  JOURNAL_RETENTION_TASK,
  journalRetentionPlace,
  outputRetentionPlaces,
} from '../../src/agent/housekeeping.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { PostgresCluster } from '../../src/journal/postgres/cluster.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { captureLogger } from '../api/support/log-capture.js';
import { describePostgres, testDatabase } from '../support/postgres.js';

const DAY = 86_400_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function file(p: string, ageDays: number, now: number): string {
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, 'x'.repeat(10));
  const at = (now - ageDays * DAY) / 1000;
  utimesSync(p, at, at);
  return p;
}

describe('retention of archive and error folders', () => {
  it('removes files older than the retention and the day folders they leave empty, logs and counts it', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'docex-retention-'));
    dirs.push(root);
    const clock = new ManualClock(Date.parse('2026-11-26T00:00:00Z'));
    const now = clock.now();
    const archive = path.join(root, 'archive');
    const oldDay = path.join(archive, '2026-08-01');
    const old = file(path.join(oldDay, 'a.pdf'), 117, now);
    const oldRecord = file(path.join(oldDay, 'a.pdf.result.json'), 117, now);
    const recent = file(path.join(archive, '2026-11-20', 'b.pdf'), 6, now);
    const outside = file(path.join(root, 'elsewhere', 'c.pdf'), 400, now);
    symlinkSync(outside, path.join(archive, 'link.pdf'));
    const errors = path.join(root, 'error');
    mkdirSync(errors);

    const { log, lines } = captureLogger('info');
    const keeping = new Housekeeping({
      places: () => [
        { folder: 'invoices', place: 'archive', dir: archive, retentionMs: 90 * DAY },
        { folder: 'invoices', place: 'error', dir: errors, retentionMs: 90 * DAY },
      ],
      clock,
      log,
    });
    await keeping.runOnce();

    expect(existsSync(old)).toBe(false);
    expect(existsSync(oldRecord)).toBe(false);
    expect(existsSync(oldDay)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    // A link is neither followed nor removed; the folders themselves stay.
    expect(existsSync(outside)).toBe(true);
    expect(existsSync(path.join(archive, 'link.pdf'))).toBe(true);
    expect(existsSync(errors)).toBe(true);
    expect(keeping.removed()).toEqual([{ folder: 'invoices', place: 'archive', files: 2 }]);
    expect(lines().map((l) => [l['msg'], l['removed'], l['bytes']])).toEqual([
      ['retention: old files removed', 2, 20],
    ]);

    // Nothing older left: a second pass removes nothing and says nothing.
    await keeping.runOnce();
    expect(lines()).toHaveLength(1);
    expect(keeping.removed()).toEqual([{ folder: 'invoices', place: 'archive', files: 2 }]);
  });

  it('removes old files of the outputs that have a retention, counted under their place, and leaves the others alone', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'docex-retention-out-'));
    dirs.push(root);
    const clock = new ManualClock(Date.parse('2026-11-26T00:00:00Z'));
    const now = clock.now();
    const oldProof = file(path.join(root, 'proofs', '2026-08-01', 'x', 'p.pdf'), 100, now);
    const newProof = file(path.join(root, 'proofs', '2026-11-25', 'x', 'p.pdf'), 1, now);
    const oldStatus = file(path.join(root, 'statuses', '2026-08-01', 'x.status.json'), 100, now);
    const { log, lines } = captureLogger('info');
    const keeping = new Housekeeping({
      places: () =>
        outputRetentionPlaces([
          { place: 'proofs', target: new LocalTarget(path.join(root, 'proofs')), retentionMs: 90 * DAY },
          { place: 'statuses', target: new LocalTarget(path.join(root, 'statuses')), retentionMs: undefined },
        ]),
      clock,
      log,
    });
    await keeping.runOnce();
    expect(existsSync(oldProof)).toBe(false);
    expect(existsSync(newProof)).toBe(true);
    expect(existsSync(oldStatus)).toBe(true);
    expect(keeping.removed()).toEqual([{ folder: '', place: 'proofs', files: 1 }]);
    expect(lines().map((l) => [l['msg'], l['place'], l['dir'], l['removed']])).toEqual([
      ['retention: old files removed', 'proofs', `local:${path.join(root, 'proofs')}`, 1],
    ]);
  });

  it('reads an output retention as off by default, or a duration, on local and SFTP targets', () => {
    const base = { sandbox: { enabled: true }, stateDir: '/var/lib/docex' };
    const defaults = agentConfigSchema.parse(base);
    expect(defaults.returns.proofs.target.retention).toBeUndefined();
    const set = agentConfigSchema.parse({
      ...base,
      returns: {
        proofs: { target: { type: 'local', path: '/srv/proofs', retention: '90d' } },
        statuses: {
          target: {
            type: 'sftp',
            host: 'erp.example.test',
            username: 'erp',
            password: 'pw',
            hostKey: { sha256: ['SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU'] },
            path: '/out/statuses',
            retention: '30d',
          },
        },
      },
      peppolInbox: { target: { type: 'local', path: '/srv/inbox', retention: 'off' } },
    });
    expect(set.returns.proofs.target.retention).toBe(90 * DAY);
    expect(set.returns.statuses.target.retention).toBe(30 * DAY);
    expect(set.peppolInbox.target.retention).toBeUndefined();
  });

  it('prunes the journal by its own retention: logged with its rows and history entries, counted under place journal', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'docex-retention-journal-'));
    dirs.push(root);
    const clock = new ManualClock(Date.parse('2026-08-01T00:00:00Z'));
    const { log, lines } = captureLogger('info');
    const journal = SqliteJournal.open(path.join(root, 'journal.sqlite'), { clock, log: silentLogger() });
    try {
      const input = {
        folder: 'invoices',
        sourcePath: '/in/a.pdf',
        claimedPath: '/in/.processing/a.pdf',
        fileName: 'a.pdf',
        size: 1,
        mtimeMs: 0,
        sha256: 'a'.repeat(64),
        workflowId: 'wf',
        mode: 'single-file' as const,
      };
      const { item } = await journal.recordClaim(input);
      await journal.transition(item.id, 'rejected', { code: 'DOCEX_REJECTED', reason: 'test' });
      clock.advance(100 * DAY);
      const keeping = new Housekeeping({
        places: () => journalRetentionPlace(journal, 90 * DAY),
        clock,
        log,
      });
      await keeping.runOnce();
      expect(await journal.get(item.id)).toBeUndefined();
      expect(keeping.removed()).toEqual([{ folder: '', place: 'journal', files: 1 }]);
      expect(lines().map((l) => [l['msg'], l['place'], l['removed'], l['history'], l['rows']])).toEqual([
        ['retention: old files removed', 'journal', 1, 2, 0],
      ]);
      expect(journalRetentionPlace(journal, undefined)).toEqual([]);
    } finally {
      await journal.close();
    }
  });

  it('reads retention as off by default, or a duration per folder place', () => {
    const config = agentConfigSchema.parse({
      service: {
        apiUrl: 'https://api.example.test/v1',
        authUrl: 'https://auth.example.test',
        clientId: 'client',
        clientSecret: 's3cret',
        apiKey: 'k3y',
        tls: { caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key' },
      },
      stateDir: '/var/lib/docex',
      folders: [
        { name: 'kept', source: { type: 'local', path: '/in/kept' }, workflowId: 'wf_1' },
        {
          name: 'cleaned',
          source: { type: 'local', path: '/in/cleaned' },
          workflowId: 'wf_1',
          retention: { archive: '90d', error: 'off' },
        },
      ],
    });
    expect(config.folders[0]!.retention).toEqual({ archive: undefined, error: undefined });
    expect(config.folders[1]!.retention).toEqual({ archive: 90 * DAY, error: undefined });
  });
});

const noFiles = { files: 0, bytes: 0 };

describe('retention once across the agents on one journal', () => {
  it('runs a shared place only when the claim answers true, a local place always; a failed claim is a warning', async () => {
    const clock = new ManualClock(Date.parse('2026-11-26T00:00:00Z'));
    const { log, lines } = captureLogger('debug');
    const ran: string[] = [];
    const claims: [string, number][] = [];
    let answer: boolean | Error = false;
    const place = (name: string, clusterTask?: string) => ({
      folder: '',
      place: name,
      dir: name,
      retentionMs: DAY,
      ...(clusterTask ? { clusterTask } : {}),
      remove: async () => {
        ran.push(name);
        return noFiles;
      },
    });
    const keeping = new Housekeeping({
      places: () => [place('journal', JOURNAL_RETENTION_TASK), place('local-archive')],
      clock,
      log,
      intervalMs: 6 * 3_600_000,
      claim: async (name, periodMs) => {
        claims.push([name, periodMs]);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
    await keeping.runOnce();
    expect(ran).toEqual(['local-archive']);
    // Claimed for a little less than the interval, so this agent's next pass finds it due.
    expect(claims).toEqual([[JOURNAL_RETENTION_TASK, 0.9 * 6 * 3_600_000]]);
    expect(lines().some((l) => l['msg'] === 'retention: another agent runs it')).toBe(true);
    answer = true;
    await keeping.runOnce();
    expect(ran).toEqual(['local-archive', 'journal', 'local-archive']);
    answer = new Error('database down');
    await keeping.runOnce();
    expect(ran).toEqual(['local-archive', 'journal', 'local-archive', 'local-archive']);
    expect(
      lines()
        .filter((l) => l['msg'] === 'retention pass failed')
        .map((l) => l['place']),
    ).toEqual(['journal']);
  });

  it('names a cluster task for the journal and for outputs on an SFTP server, none for a local folder', () => {
    const target = (description: string) => ({
      description,
      write: async () => {},
      exists: async () => false,
      removeOlderThan: async () => noFiles,
      close: async () => {},
    });
    const places = outputRetentionPlaces([
      { place: 'proofs', target: target('sftp://erp@files.example:22/out/proofs'), retentionMs: DAY },
      { place: 'statuses', target: target('local:/srv/statuses'), retentionMs: DAY },
    ]);
    expect(places.map((p) => [p.place, p.clusterTask])).toEqual([
      ['proofs', 'retention:proofs:sftp://erp@files.example:22/out/proofs'],
      ['statuses', undefined],
    ]);
    const journal = {
      location: 'postgres://docex@db/docex',
      pruneFinished: async () => ({ items: 0, rows: 0, history: 0 }),
    };
    expect(journalRetentionPlace(journal as never, DAY)[0]?.clusterTask).toBe(JOURNAL_RETENTION_TASK);
  });
});

describePostgres('retention of a shared journal by two agents', () => {
  it('prunes once per period whichever agent passes first, and again once the period is over (database clock)', async () => {
    const url = await testDatabase();
    const journal = await PostgresJournal.open(postgresConnection(url), {
      clock: new ManualClock(),
      log: silentLogger(),
    });
    await journal.close();
    const clusters = [1, 2].map((n) =>
      PostgresCluster.open(postgresConnection(url), {
        deadAfterMs: 60_000,
        identity: {
          id: `agent-${n}`,
          host: `host-${n}`,
          pid: n,
          version: '0.1.0',
          place: `host-${n}:/state`,
        },
      }),
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const pruned: string[] = [];
      const keepers = clusters.map(
        (cluster, i) =>
          new Housekeeping({
            places: () => [
              {
                folder: '',
                place: 'journal',
                dir: url,
                retentionMs: DAY,
                clusterTask: JOURNAL_RETENTION_TASK,
                remove: async () => {
                  pruned.push(`agent-${i + 1}`);
                  return noFiles;
                },
              },
            ],
            clock: new ManualClock(),
            log: silentLogger(),
            claim: (name, periodMs) => cluster.claimPeriodicTask(name, periodMs),
          }),
      );
      await Promise.all(keepers.map((k) => k.runOnce()));
      expect(pruned).toHaveLength(1);
      await Promise.all(keepers.map((k) => k.runOnce()));
      expect(pruned).toHaveLength(1);
      // Six hours later by the database's clock (last_run set back rather than waited for).
      await client.query(`UPDATE cluster_tasks SET last_run = last_run - interval '6 hours'`);
      await Promise.all(keepers.map((k) => k.runOnce()));
      expect(pruned).toHaveLength(2);
      const owner = await client.query('SELECT owner FROM cluster_tasks WHERE name = $1', [
        JOURNAL_RETENTION_TASK,
      ]);
      expect(owner.rows[0].owner).toBe(pruned[1]);
    } finally {
      await client.end();
      for (const c of clusters) await c.close();
    }
  });
});
