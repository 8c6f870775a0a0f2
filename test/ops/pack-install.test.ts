/**
 * The published package, as a user gets it: `npm pack` (its prepack builds dist/), then
 * `npm install -g --prefix <temp> ./docex-agent-*.tgz`, then the installed `docex-agent` command:
 * `--help`, `sandbox` (started on OS-chosen ports, asked, stopped) and `start` against that
 * sandbox, which takes a dropped PDF and archives it with its result.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
// The installed command's `#!/usr/bin/env node` and npm itself run on the Node running this test.
const env = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
  DOCEX_LOG_LEVEL: 'info',
};
const npm = (args: string[], cwd = root) =>
  run('npm', [...args, '--no-audit', '--no-fund'], { cwd, env, maxBuffer: 64 * 1024 * 1024 });

let dir: string;
let tarball: string;
let packed: string[];
let bin: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-pack-'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', dir]);
  // prepack's build output precedes the JSON on stdout.
  const report = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = path.join(dir, report[0]!.filename);
  packed = report[0]!.files.map((f) => f.path);
  const prefix = path.join(dir, 'prefix');
  // The dependencies come from npm's cache when `npm ci` has filled it (CI), else the registry.
  await npm(['install', '-g', '--prefix', prefix, '--prefer-offline', tarball], dir);
  bin = path.join(prefix, 'bin', 'docex-agent');
}, 300_000);

afterAll(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Spawns the installed command; its output accumulates in `out()`. */
function launch(args: string[]) {
  const child = spawn(bin, args, { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  child.stdout.on('data', (d: Buffer) => {
    text += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const until = async (check: (out: string) => boolean, timeoutMs: number) => {
    try {
      await waitFor(() => {
        if (child.exitCode !== null) throw new Error(`exited early with ${child.exitCode}`);
        return check(text) || undefined;
      }, timeoutMs);
    } catch (err) {
      throw new Error(`${(err as Error).message}; output:\n${text.slice(-4000)}`);
    }
  };
  return { child, exited, until, out: () => text };
}

describe('npm pack and a global install of the tarball', () => {
  it('packs dist/, the example config, its JSON Schema, systemd/, docs/, README and LICENSE, and no tests, bench, sources or source maps', () => {
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/cli/main.js',
      'dist/sandbox/seed-data/peppol/base-example.xml',
      'config/agent.example.yaml',
      'config/agent.schema.json',
      'systemd/docex-agent.service',
      'systemd/README.md',
      // What the README links to (scripts/check-doc-links.mjs checks every link of a packed page).
      'docs/install.md',
      'docs/operations.md',
    ]) {
      expect(packed, file).toContain(file);
    }
    const stray = packed.filter((f) =>
      /^(test|bench|src|samples|scripts|\.ci)\/|\.map$|\.ts$|^dist\/.*\.test\./.test(f),
    );
    expect(stray).toEqual([]);
  });

  it('gives a docex-agent command whose --help lists the commands', async () => {
    const { stdout } = await run(bin, ['--help'], { env });
    for (const command of ['start', 'sandbox', 'check', 'credentials']) expect(stdout).toContain(command);
  });

  it('runs the sandbox on ports from the OS, which answers, and `start` against it archives a dropped PDF; both stop with exit 0', async () => {
    const sandboxDir = path.join(dir, 'sandbox');
    const ports = ['--api-port', '0', '--auth-port', '0', '--files-port', '0', '--admin-port', '0'];
    const sandbox = launch(['sandbox', '--state-dir', sandboxDir, ...ports]);
    await sandbox.until((out) => out.includes('Press Ctrl+C'), 60_000);

    const control = /control API: (https:\/\/127\.0\.0\.1:\d+\/_sandbox\/state)/.exec(sandbox.out())?.[1];
    expect(control, sandbox.out()).toBeDefined();
    const ca = readFileSync(path.join(sandboxDir, 'pki', 'ca.crt'));
    const dispatcher = new Agent({ connect: { ca } });
    const answer = await request(control!, { dispatcher });
    expect(answer.statusCode).toBe(200);
    expect(await answer.body.json()).toBeTypeOf('object');
    await dispatcher.close();

    const fragment = parse(readFileSync(path.join(sandboxDir, 'agent-config.yaml'), 'utf8')) as object;
    const agentDir = path.join(dir, 'agent');
    mkdirSync(path.join(agentDir, 'in'), { recursive: true });
    const configFile = path.join(agentDir, 'agent.yaml');
    writeFileSync(
      configFile,
      stringify({
        ...fragment,
        stateDir: './state',
        ops: { listen: '127.0.0.1:0' },
        folders: [
          {
            name: 'pdf',
            source: { type: 'local', path: './in' },
            workflowId: SEED.workflows.pdfEmail,
            archiveDir: './archive',
            errorDir: './error',
            stability: { kind: 'rename-in' },
          },
        ],
      }),
    );
    const agent = launch(['start', '--config', configFile]);
    await agent.until((out) => out.includes('"msg":"agent started"'), 60_000);
    const temp = path.join(agentDir, 'in', 'invoice.pdf.part');
    writeFileSync(temp, await makePdf('installed from the tarball'));
    renameSync(temp, path.join(agentDir, 'in', 'invoice.pdf'));
    await waitFor(
      () =>
        listFiles(path.join(agentDir, 'archive')).some((f) => f.endsWith('invoice.pdf.result.json')) ||
        undefined,
      60_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; agent output:\n${agent.out().slice(-4000)}`);
    });

    agent.child.kill('SIGTERM');
    expect(await agent.exited, agent.out().slice(-4000)).toEqual({ code: 0, signal: null });
    sandbox.child.kill('SIGTERM');
    expect(await sandbox.exited, sandbox.out().slice(-4000)).toEqual({ code: 0, signal: null });
  }, 180_000);
});
