import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Agent, AgentOptions } from '../../src/agent/agent.js';
import { ConfigReloader } from '../../src/agent/reload.js';
import { loadConfig } from '../../src/config/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import {
  clientWith,
  type Harness,
  listFiles,
  makeHarness,
  makePdf,
} from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: Harness;
let configFile: string;

beforeEach(async () => {
  h = await makeHarness();
  configFile = path.join(h.dir, 'agent.yaml');
});

afterEach(async () => {
  await h.cleanup();
});

type FolderSpec = string | ({ name: string } & Record<string, unknown>);

function writeConfig(folders: FolderSpec[]): void {
  writeFileSync(
    configFile,
    stringify({
      sandbox: { enabled: true },
      stateDir: path.join(h.dir, 'state'),
      shutdownGraceMs: 2000,
      ops: { enabled: false },
      folders: folders.map((spec) => {
        const { name, ...overrides } = typeof spec === 'string' ? { name: spec } : spec;
        return {
          name,
          workflowId: SEED.workflows.pdfEmail,
          source: { type: 'local', path: h.folderPath(name) },
          create: true,
          archiveDir: path.join(h.dir, 'archive', name),
          errorDir: path.join(h.dir, 'error', name),
          stability: { kind: 'rename-in' },
          ...overrides,
        };
      }),
    }),
  );
}

async function startFromFile(
  options: Partial<AgentOptions>,
): Promise<{ agent: Agent; reloader: ConfigReloader }> {
  const { config } = loadConfig(configFile);
  const agent = await h.startAgent(config, options);
  const reloader = new ConfigReloader({
    configFile,
    config,
    target: agent,
    fetchWorkflow: (id) => h.client.workflows.get(id),
    log: h.log,
  });
  return { agent, reloader };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logsOf = (msg: string, file: string) => h.logs.filter((l) => l['msg'] === msg && l['file'] === file);

describe('reload and files waiting for a retry', () => {
  it('cancels the retry of a removed folder: the file stays in .processing and no "folder not running" is logged', async () => {
    writeConfig(['invoices', 'orders']);
    // Far longer than any reload (which fetches workflows), however loaded the machine: the retry
    // cannot come first. That it never comes is read from the timers, not waited for.
    const retryMs = 600_000;
    const { agent, reloader } = await startFromFile({
      retryDelayMs: () => retryMs,
      client: clientWith(h.client, () => ({
        uploadFile: async () => {
          throw new Error('upload refused by the test');
        },
      })),
    });
    h.drop('invoices', 'waiting.pdf', await makePdf('waits for a retry'));
    await waitFor(() => logsOf('file must wait', 'waiting.pdf').length > 0);
    expect(agent.pipeline.tracked().waiting).toBe(1);

    writeConfig(['orders']);
    expect(await reloader.reload()).toMatchObject({ applied: true, removed: ['invoices'] });

    // The removal cancelled the file's timer: nothing is left to fire.
    expect(agent.pipeline.tracked()).toEqual({ folders: [], waiting: 0, claiming: 0 });
    expect(h.logs.filter((l) => l['msg'] === 'folder not running; item left')).toEqual([]);
    expect(logsOf('file must wait', 'waiting.pdf')).toHaveLength(1);
    expect(existsSync(path.join(h.folderPath('invoices'), '.processing', 'waiting.pdf'))).toBe(true);
  });

  it('resumes a waiting file of a changed folder once, by the new folder only (the old timer is gone)', async () => {
    writeConfig(['invoices']);
    const retryMs = 1500;
    let uploads = 0;
    const { agent, reloader } = await startFromFile({
      retryDelayMs: () => retryMs,
      client: clientWith(h.client, (real) => ({
        uploadFile: async (...args) => {
          uploads++;
          if (uploads === 1) throw new Error('first upload refused by the test');
          return real.uploadFile(...args);
        },
      })),
    });
    h.drop('invoices', 'changed.pdf', await makePdf('waits across a change'));
    await waitFor(() => logsOf('file must wait', 'changed.pdf').length > 0);
    const failedAt = Date.now();

    writeConfig([{ name: 'invoices', concurrency: 3 }]);
    expect(await reloader.reload()).toMatchObject({ applied: true, changed: ['invoices'] });
    await waitFor(() =>
      listFiles(path.join(h.dir, 'archive', 'invoices')).some((f) => f.endsWith('changed.pdf.result.json')),
    );
    await sleep(Math.max(0, failedAt + retryMs + 400 - Date.now()));
    expect(logsOf('file finished', 'changed.pdf')).toHaveLength(1);
    expect(uploads).toBe(2);
    expect(agent.pipeline.tracked()).toEqual({ folders: ['invoices'], waiting: 0, claiming: 0 });
  });

  it('drops the scheduler state of folders removed by reloads (it does not grow with each reload)', async () => {
    writeConfig(['invoices']);
    const { agent, reloader } = await startFromFile({});
    for (const name of ['a1', 'a2', 'a3']) {
      writeConfig(['invoices', name]);
      await reloader.reload();
      h.drop(name, `${name}.pdf`, await makePdf(name));
      await waitFor(() =>
        listFiles(path.join(h.dir, 'archive', name)).some((f) => f.endsWith(`${name}.pdf.result.json`)),
      );
      writeConfig(['invoices']);
      expect(await reloader.reload()).toMatchObject({ applied: true, removed: [name] });
    }
    expect(agent.pipeline.tracked().folders).toEqual([]);
  });

  it('starts again on a reload a folder stopped for an .archive swapped for a link, once a real folder is back, and archives its uploaded file', async () => {
    const archiveDir = path.join(h.folderPath('invoices'), '.archive');
    writeConfig([{ name: 'invoices', archiveDir }]);
    const { agent, reloader } = await startFromFile({
      source: { statIntervalMs: 10, rescanIntervalMs: 0, watch: true },
    });
    const outside = path.join(h.dir, 'outside');
    mkdirSync(outside);
    rmSync(archiveDir, { recursive: true });
    symlinkSync(outside, archiveDir);
    h.drop('invoices', 'a.pdf', await makePdf('archived after the reload'));
    await waitFor(() => agent.stoppedFolders.find((f) => f.code === 'DOCEX_FOLDER_UNSAFE'), 30_000);
    await waitFor(() => !agent.plan.running.has('invoices'));
    const item = async () => (await agent.journal.byPath(path.join(h.folderPath('invoices'), 'a.pdf')))[0];
    expect((await item())?.state).toBe('uploaded');

    rmSync(archiveDir);
    mkdirSync(archiveDir);
    expect(await reloader.reload()).toMatchObject({ applied: true });
    expect(agent.stoppedFolders).toEqual([]);
    await waitFor(async () => (await item())?.state === 'done', 30_000);
    expect(listFiles(archiveDir).filter((f) => f.endsWith('/a.pdf'))).toHaveLength(1);
    expect(listFiles(outside)).toEqual([]);
  });
});
