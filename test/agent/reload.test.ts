import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Agent } from '../../src/agent/agent.js';
import { ConfigReloader, diffFolders } from '../../src/agent/reload.js';
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

/** A folder as a person writes it (rename-in, absolute paths), with any overrides. */
function folderInput(spec: FolderSpec, root = h.dir): Record<string, unknown> {
  const { name, ...overrides } = typeof spec === 'string' ? { name: spec } : spec;
  return {
    name,
    workflowId: SEED.workflows.pdfEmail,
    source: { type: 'local', path: path.join(root, 'in', name) },
    create: true,
    archiveDir: path.join(root, 'archive', name),
    errorDir: path.join(root, 'error', name),
    stability: { kind: 'rename-in' },
    ...overrides,
  };
}

/** Writes the configuration file with these folders. */
function writeConfig(folders: FolderSpec[], extra: Record<string, unknown> = {}, file = configFile): void {
  writeFileSync(
    file,
    stringify({
      sandbox: { enabled: true },
      stateDir: path.join(h.dir, 'state'),
      shutdownGraceMs: 2000,
      ops: { enabled: false },
      folders: folders.map((f) => folderInput(f)),
      ...extra,
    }),
  );
}

async function startFromFile(client?: Parameters<Harness['startAgent']>[1]): Promise<{
  agent: Agent;
  reloader: ConfigReloader;
}> {
  const { config } = loadConfig(configFile);
  const agent = await h.startAgent(config, client ?? {});
  const reloader = new ConfigReloader({
    configFile,
    config,
    target: agent,
    fetchWorkflow: (id) => h.client.workflows.get(id),
    log: h.log,
  });
  return { agent, reloader };
}

const archived = (folder: string, file: string) => () =>
  listFiles(path.join(h.dir, 'archive', folder)).some((f) => f.endsWith(`${file}.result.json`));

describe('configuration reload', () => {
  it('starts a folder added to the file: a file dropped in it is submitted and archived', async () => {
    writeConfig(['invoices']);
    const { agent, reloader } = await startFromFile();
    writeConfig(['invoices', 'orders']);
    const result = await reloader.reload();
    expect(result).toMatchObject({ applied: true, added: ['orders'], removed: [], changed: [] });
    expect([...agent.plan.running.keys()].sort()).toEqual(['invoices', 'orders']);

    h.drop('orders', 'order-1.pdf', await makePdf('order one'));
    await waitFor(archived('orders', 'order-1.pdf'));
    expect((await h.jobs()).map((j) => j.filename)).toEqual(['order-1.pdf']);
    expect(h.logs.some((l) => l['msg'] === 'folder started' && l['folder'] === 'orders')).toBe(true);
  });

  it('stops a folder added with a missing drop folder (not made, one error line with its key), and starts it at the reload after the folder is made', async () => {
    writeConfig(['invoices']);
    const { agent, reloader } = await startFromFile();
    const drop = path.join(h.dir, 'in', 'typo');
    writeConfig(['invoices', { name: 'typo', create: false }]);
    await reloader.reload();
    expect(existsSync(drop)).toBe(false);
    expect([...agent.plan.running.keys()]).toEqual(['invoices']);
    expect(agent.stoppedFolders.map((s) => s.code)).toEqual(['DOCEX_SOURCE_FOLDER_MISSING']);
    expect(h.logs.filter((l) => l['msg'] === 'folder stopped')).toEqual([
      expect.objectContaining({
        folder: 'typo',
        code: 'DOCEX_SOURCE_FOLDER_MISSING',
        path: drop,
        at: 'folders[1].source.path',
      }),
    ]);

    mkdirSync(drop);
    await reloader.reload();
    expect([...agent.plan.running.keys()].sort()).toEqual(['invoices', 'typo']);
    expect(agent.stoppedFolders).toEqual([]);
    h.drop('typo', 'late.pdf', await makePdf('after the folder was made'));
    await waitFor(archived('typo', 'late.pdf'));
  });

  it('stops a folder removed from the file after its file in flight is finished, and takes no new file from it', async () => {
    writeConfig(['invoices', 'orders']);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let uploading = false;
    const { agent, reloader } = await startFromFile({
      client: clientWith(h.client, (real) => ({
        uploadFile: async (...args) => {
          uploading = true;
          await gate;
          return real.uploadFile(...args);
        },
      })),
    });
    h.drop('invoices', 'slow.pdf', await makePdf('in flight during the reload'));
    await waitFor(() => uploading);

    writeConfig(['orders']);
    let reloaded = false;
    const reload = reloader.reload().then((r) => {
      reloaded = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(reloaded).toBe(false); // waits for the upload in flight
    release();
    expect(await reload).toMatchObject({ applied: true, removed: ['invoices'] });
    expect(archived('invoices', 'slow.pdf')()).toBe(true);
    expect([...agent.plan.running.keys()]).toEqual(['orders']);

    const late = h.drop('invoices', 'after.pdf', await makePdf('dropped after the removal'));
    h.drop('orders', 'order.pdf', await makePdf('still watched'));
    await waitFor(archived('orders', 'order.pdf'));
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(late)).toBe(true);
    expect((await h.jobs()).map((j) => j.filename).sort()).toEqual(['order.pdf', 'slow.pdf']);
  });

  it('starts a renamed folder on the same drop folder only after the old name has finished its file', async () => {
    writeConfig(['invoices']);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let uploading = false;
    const { agent, reloader } = await startFromFile({
      client: clientWith(h.client, (real) => ({
        uploadFile: async (...args) => {
          uploading = true;
          await gate;
          return real.uploadFile(...args);
        },
      })),
    });
    h.drop('invoices', 'first.pdf', await makePdf('before the rename'));
    await waitFor(() => uploading);
    // Same drop, archive and error folders, another name.
    writeConfig([{ ...folderInput('invoices'), name: 'bills' }]);
    const reload = reloader.reload();
    await new Promise((r) => setTimeout(r, 200));
    expect(agent.plan.running.has('bills')).toBe(false);
    release();
    expect(await reload).toMatchObject({ applied: true, added: ['bills'], removed: ['invoices'] });
    expect([...agent.plan.running.keys()]).toEqual(['bills']);
    h.drop('invoices', 'second.pdf', await makePdf('after the rename'));
    await waitFor(archived('invoices', 'second.pdf'));
    expect((await h.jobs()).map((j) => j.filename).sort()).toEqual(['first.pdf', 'second.pdf']);
  });

  it('refuses an invalid file, logs the problems and keeps the running folders going', async () => {
    writeConfig(['invoices']);
    const { agent, reloader } = await startFromFile();
    writeConfig(['invoices', 'orders'], { concurrency: 0, bogus: true });
    const result = await reloader.reload();
    expect(result.applied).toBe(false);
    if (result.applied) return;
    expect(result.code).toBe('DOCEX_CONFIG_INVALID');
    expect(result.problems.join('\n')).toMatch(/concurrency/);
    const refused = h.logs.find((l) => String(l['msg']).startsWith('configuration reload refused'));
    expect(refused).toMatchObject({ code: 'DOCEX_CONFIG_INVALID', level: 50 });
    expect(String(refused?.['problems'])).toMatch(/concurrency/);
    expect([...agent.plan.running.keys()]).toEqual(['invoices']);

    writeFileSync(configFile, 'folders: [ unclosed');
    expect(await reloader.reload()).toMatchObject({ applied: false, code: 'DOCEX_CONFIG_YAML' });

    h.drop('invoices', 'still.pdf', await makePdf('old config still runs'));
    await waitFor(archived('invoices', 'still.pdf'));
  });

  it('restarts a folder whose settings changed, and names settings that need a restart', async () => {
    writeConfig(['invoices']);
    const { agent, reloader } = await startFromFile();
    const before = agent.plan.running.get('invoices')!.config.concurrency;
    writeConfig([{ name: 'invoices', concurrency: before + 1 }], { concurrency: 7 });
    const result = await reloader.reload();
    expect(result).toMatchObject({ applied: true, changed: ['invoices'], restartNeeded: ['concurrency'] });
    expect(agent.plan.running.get('invoices')!.config.concurrency).toBe(before + 1);
    expect(h.logs.find((l) => l['msg']?.toString().includes('next restart'))).toMatchObject({
      settings: ['concurrency'],
    });
    h.drop('invoices', 'after-change.pdf', await makePdf('after the change'));
    await waitFor(archived('invoices', 'after-change.pdf'));
  });
});

describe('folder differences', () => {
  it('names folders added, removed or disabled, and changed', () => {
    const parse = (folders: FolderSpec[]) => {
      const file = path.join(h.dir, 'diff.yaml');
      writeConfig(folders, {}, file);
      return loadConfig(file).config.folders;
    };
    const before = parse(['a', 'b', 'c', 'e']);
    const after = parse([{ name: 'a', enabled: false }, { name: 'b', include: ['*.xml'] }, 'c', 'd']);
    const diff = diffFolders(before, after);
    expect(diff.added.map((f) => f.name)).toEqual(['d']);
    expect(diff.removed.sort()).toEqual(['a', 'e']);
    expect(diff.changed.map((f) => f.name)).toEqual(['b']);
  });
});
