import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Agent } from '../../src/agent/agent.js';
import { runStart } from '../../src/cli/start-runner.js';
import { PG_SCHEMA_VERSION } from '../../src/journal/postgres/schema.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';

let sandbox: TestSandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-start-'));
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `start` on a configuration with its log lines captured; resolves once the agent has started. */
async function startCapturing(configFile: string) {
  const logs: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        logs.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  let stop: (signal: string) => void = () => {};
  const stopSignal = new Promise<string>((resolve) => {
    stop = resolve;
  });
  let agent: Agent | undefined;
  const exit = runStart(configFile, { stopSignal, log, onStarted: (a) => (agent = a) });
  await waitFor(() => agent);
  return { logs, agent: agent!, stop, exit };
}

describe('docex-agent start', () => {
  it('creates the folders (create: true), submits a dropped file, logs file/folder/jobId, and exits 0 on the stop signal', async () => {
    const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
    const configFile = path.join(dir, 'agent.yaml');
    writeFileSync(
      configFile,
      stringify({
        ...fragment,
        stateDir: './state',
        folders: [
          {
            name: 'invoices',
            source: { type: 'local', path: './in/invoices' },
            create: true,
            workflowId: SEED.workflows.pdfEmail,
            stability: { kind: 'settle', settleMs: 50 },
          },
        ],
      }),
    );
    const { logs, stop, exit } = await startCapturing(configFile);

    writeFileSync(path.join(dir, 'in', 'invoices', 'inv-1.pdf'), await makePdf('started agent'));
    const archive = path.join(dir, 'in', 'invoices', '.archive');
    await waitFor(() => listFiles(archive).some((f) => f.endsWith('inv-1.pdf.result.json')));
    stop('SIGTERM');
    expect(await exit).toBe(0);

    const uploaded = logs.find((l) => l['msg'] === 'uploaded');
    expect(uploaded).toMatchObject({ folder: 'invoices', file: 'inv-1.pdf' });
    expect(String(uploaded?.['jobId'])).toMatch(/^job_/);
    expect(logs.some((l) => l['msg'] === 'agent stopped' && l['drained'] === true)).toBe(true);
    // No secret and no pre-signed URL in any line.
    const all = JSON.stringify(logs);
    expect(all).not.toContain(sandbox.sandbox.credentials.clientSecret);
    expect(all).not.toContain(sandbox.sandbox.credentials.apiKey);
    expect(all).not.toMatch(/\/upload\/job_[^"]*\?/);
  });

  it('with sandbox.enabled starts the built-in sandbox in the process and takes the connection from it', async () => {
    const configFile = path.join(dir, 'with-sandbox.yaml');
    writeFileSync(
      configFile,
      stringify({
        sandbox: { enabled: true, stateDir: './own-sandbox', speed: 100 },
        stateDir: './own-state',
        log: { level: 'warn' },
        folders: [
          {
            name: 'ubl',
            source: { type: 'local', path: './own-in/ubl' },
            create: true,
            workflowId: SEED.workflows.ubl,
            stability: { kind: 'settle', settleMs: 50 },
          },
        ],
      }),
    );
    let stop: (signal: string) => void = () => {};
    const stopSignal = new Promise<string>((resolve) => {
      stop = resolve;
    });
    let agent: Agent | undefined;
    const exit = runStart(configFile, {
      stopSignal,
      log: pino({ level: 'silent' }),
      onStarted: (a) => (agent = a),
    });
    await waitFor(() => agent);
    expect(agent?.sandbox).toBeDefined();
    writeFileSync(
      path.join(dir, 'own-in', 'ubl', 'invoice.xml'),
      readFileSync('samples/ubl/invoice-base-example.xml'),
    );
    await waitFor(async () => (await agent?.journal.stats())?.files.done === 1);
    stop('SIGINT');
    expect(await exit).toBe(0);
  });

  it('does not make a missing drop folder: that folder stops with one error line naming it, its path, key and code, and the other folder runs', async () => {
    const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
    const configFile = path.join(dir, 'typo.yaml');
    mkdirSync(path.join(dir, 'typo-in', 'invoices'), { recursive: true });
    const folder = (name: string, drop: string) => ({
      name,
      source: { type: 'local', path: drop },
      workflowId: SEED.workflows.pdfEmail,
      stability: { kind: 'settle', settleMs: 50 },
    });
    writeFileSync(
      configFile,
      stringify({
        ...fragment,
        stateDir: './typo-state',
        folders: [folder('invoices', './typo-in/invoices'), folder('typo', './no-such-parent/invoices')],
      }),
    );
    const { logs, agent, stop, exit } = await startCapturing(configFile);

    const missing = path.join(dir, 'no-such-parent', 'invoices');
    expect(existsSync(path.join(dir, 'no-such-parent'))).toBe(false);
    const stopped = logs.filter((l) => l['msg'] === 'folder stopped');
    expect(stopped).toEqual([
      expect.objectContaining({
        level: 50,
        folder: 'typo',
        code: 'DOCEX_SOURCE_FOLDER_MISSING',
        path: missing,
        at: 'folders[1].source.path',
      }),
    ]);
    expect(String(stopped[0]?.['reason'])).toBe(
      `folder typo: drop folder ${missing} (folders[1].source.path) does not exist; the agent makes no drop folder unless the folder says create: true. Fix: create it for the agent's user and the ERP's group (install -d -o docex-agent -g docex-agent -m 2770 ${missing}, systemd/README.md step 5) or correct folders[1].source.path, then reload; or set folders[1].create: true to let the agent make it`,
    );
    expect(agent.stoppedFolders.map((s) => [s.name, s.code])).toEqual([
      ['typo', 'DOCEX_SOURCE_FOLDER_MISSING'],
    ]);

    writeFileSync(
      path.join(dir, 'typo-in', 'invoices', 'kept-running.pdf'),
      await makePdf('the other folder'),
    );
    const archive = path.join(dir, 'typo-in', 'invoices', '.archive');
    await waitFor(() => listFiles(archive).some((f) => f.endsWith('kept-running.pdf.result.json')));
    stop('SIGTERM');
    expect(await exit).toBe(0);
    expect(existsSync(path.join(dir, 'no-such-parent'))).toBe(false);
  });

  it('stops a drop folder it cannot reach (a file on its path; EACCES alike) or cannot make its own folders in, with the folder, path, key and reason, and runs on', async () => {
    const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
    const configFile = path.join(dir, 'unreachable.yaml');
    writeFileSync(path.join(dir, 'a-plain-file'), 'not a folder');
    mkdirSync(path.join(dir, 'letters'), { recursive: true });
    writeFileSync(
      configFile,
      stringify({
        ...fragment,
        stateDir: './unreachable-state',
        folders: [
          {
            name: 'behind-a-file',
            source: { type: 'local', path: './a-plain-file/invoices' },
            workflowId: SEED.workflows.pdfEmail,
          },
          {
            name: 'archive-behind-a-file',
            source: { type: 'local', path: './letters' },
            archiveDir: './a-plain-file/archive',
            workflowId: SEED.workflows.pdfEmail,
          },
        ],
      }),
    );
    const { logs, stop, exit } = await startCapturing(configFile);
    const unreachable = path.join(dir, 'a-plain-file', 'invoices');
    expect(logs.filter((l) => l['msg'] === 'folder stopped')).toEqual([
      expect.objectContaining({
        folder: 'behind-a-file',
        code: 'DOCEX_SOURCE_FOLDER_MISSING',
        path: unreachable,
        at: 'folders[0].source.path',
        reason: expect.stringContaining(
          `drop folder ${unreachable} (folders[0].source.path) cannot be reached (ENOTDIR)`,
        ),
      }),
      expect.objectContaining({
        folder: 'archive-behind-a-file',
        code: 'DOCEX_SOURCE_FOLDER_MISSING',
        at: 'folders[1].source.path',
        reason: expect.stringContaining(
          `cannot be written (ENOTDIR at ${path.join(dir, 'a-plain-file', 'archive')})`,
        ),
      }),
    ]);
    stop('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('exits 2 with the configuration error when the file is invalid', async () => {
    const configFile = path.join(dir, 'bad.yaml');
    writeFileSync(configFile, 'folders: 3\n');
    expect(await runStart(configFile, { stopSignal: Promise.resolve('test') })).toBe(2);
  });
});

describePostgres('docex-agent start on a PostgreSQL journal', () => {
  it('stops by itself with exit code 1 when a heartbeat finds the journal migrated past its version', async () => {
    const url = await testDatabase();
    const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
    const configFile = path.join(dir, 'on-postgres.yaml');
    writeFileSync(
      configFile,
      stringify({
        ...fragment,
        stateDir: './pg-state',
        journal: { url, sslmode: 'disable' },
        cluster: { heartbeatMs: 1_000, deadAfterMs: 60_000 },
        folders: [
          {
            name: 'pg-invoices',
            source: { type: 'local', path: './pg-in/invoices' },
            create: true,
            workflowId: SEED.workflows.pdfEmail,
          },
        ],
      }),
    );
    const { logs, agent, exit } = await startCapturing(configFile);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // A newer agent's migration (one it could make while this agent counted as dead).
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)', [
        PG_SCHEMA_VERSION + 1,
      ]);
      expect(await exit).toBe(1);
      expect(logs.find((l) => String(l['msg']).startsWith('cluster: a newer agent migrated'))).toMatchObject({
        level: 50,
        code: 'DOCEX_JOURNAL_VERSION',
      });
      expect(logs.some((l) => l['msg'] === 'stopping agent: it must not run on this journal')).toBe(true);
      expect(logs.some((l) => l['msg'] === 'agent stopped')).toBe(true);
      // It said goodbye: its row no longer holds a migration back.
      const row = await client.query('SELECT stopped_at IS NOT NULL AS stopped FROM agents WHERE id = $1', [
        agent.cluster.self.id,
      ]);
      expect(row.rows).toEqual([{ stopped: true }]);
    } finally {
      await client.end();
    }
  });
});
