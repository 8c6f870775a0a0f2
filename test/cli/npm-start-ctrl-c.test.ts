/**
 * `npm start` stopped as a terminal stops it: Ctrl-C sends SIGINT to the whole foreground process
 * group (npm, its shell, the agent), and npm passes it on to its child as well. The agent and its
 * built-in sandbox must both log that they stopped, and a repeat of the signal a moment later (the
 * same Ctrl-C passed on, or a user pressing it twice quickly) must not cut the stop short.
 *
 * `npm start -- --config <file>`: npm's own script, with a configuration of this test's (ports from
 * the OS, folders in a temp folder) given last, which the command line takes over the script's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { SEED } from '../../src/sandbox/seed-ids.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  child: ChildProcess;
  messages: () => string[];
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let dir: string | undefined;
let running: Run | undefined;

afterEach(() => {
  // The whole group, should the test fail half-way (its own group: nothing else is hit).
  if (running?.child.pid && running.child.exitCode === null && running.child.signalCode === null) {
    try {
      process.kill(-running.child.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  running = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function writeConfig(): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-ctrl-c-'));
  const file = path.join(dir, 'agent.yaml');
  writeFileSync(
    file,
    stringify({
      version: 1,
      sandbox: {
        enabled: true,
        stateDir: './sandbox',
        speed: 10,
        ports: { api: 0, auth: 0, files: 0, admin: 0 },
      },
      stateDir: './state',
      log: { level: 'info', format: 'json' },
      ops: { listen: '127.0.0.1:0' },
      folders: [
        { name: 'pdf', source: { type: 'local', path: './in' }, workflowId: SEED.workflows.pdfEmail },
      ],
    }),
  );
  return file;
}

/** The command `npm start` runs, from package.json, with `--config <file>` after it. */
function startScript(configFile: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return [...pkg.scripts['start']!.split(/\s+/), '--config', configFile];
}

/**
 * `npm start -- --config <file>`, or the script's own command without npm, in a process group of
 * its own, as a terminal's foreground job.
 */
function launch(how: 'npm start' | 'its command', configFile: string): Run {
  // npm and the script's `node` run on the Node running this test.
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
  };
  const [command, ...args] =
    how === 'npm start'
      ? ['npm', 'start', '--silent', '--', '--config', configFile]
      : startScript(configFile);
  const child = spawn(command!, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => {
    text += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const messages = () =>
    text.split('\n').flatMap((line) => {
      try {
        return [String((JSON.parse(line) as { msg?: unknown }).msg)];
      } catch {
        return [];
      }
    });
  // 'close': npm gone, and every process that shares its output (the shell, the agent) too.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, messages, output: () => text, exited };
}

async function until(run: Run, msg: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!run.messages().includes(msg)) {
    if (run.child.exitCode !== null || run.child.signalCode !== null) {
      throw new Error(`npm start exited before "${msg}":\n${run.output().slice(-4000)}`);
    }
    if (Date.now() > end)
      throw new Error(`no "${msg}" within ${timeoutMs} ms:\n${run.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Sends SIGINT to the group `times` times, each on the next turn of this process's event loop (no
 * timer: a loaded machine must not spread them past the agent's repeat window), and waits for every
 * process of the group to end.
 */
async function ctrlC(run: Run, times: number) {
  for (let n = 0; n < times; n++) {
    if (n > 0) await new Promise((resolve) => setImmediate(resolve));
    process.kill(-run.child.pid!, 'SIGINT');
  }
  return run.exited;
}

/** Both stop lines, the agent's last, with nothing cut short. */
function expectCleanStop(run: Run): void {
  const context = run.output().slice(-4000);
  const messages = run.messages();
  expect(messages, context).toContain('stopping agent');
  expect(messages, context).toContain('sandbox stopped');
  expect(messages.at(-1), context).toBe('agent stopped');
  expect(run.output(), context).toMatch(/"drained":true,"failures":0,"msg":"agent stopped"/);
  expect(messages, context).not.toContain(
    'second stop signal: exiting now, without waiting for the stop to finish',
  );
}

const ONCE = 1;
/** The same Ctrl-C passed on (npm to its shell, a shell that execs, tsx's runner), or pressed twice quickly. */
const TWICE = 2;

describe('npm start and a terminal Ctrl-C (SIGINT to the process group)', () => {
  it.each([
    ['once', ONCE],
    ['twice, one right after the other', TWICE],
  ])(
    'npm start: the agent and the sandbox stop cleanly when the group gets SIGINT %s',
    async (_label, times) => {
      const run = launch('npm start', writeConfig());
      running = run;
      await until(run, 'agent started', 90_000);
      const end = await ctrlC(run, times);
      expectCleanStop(run);
      // npm (through its shell, dash here) ends the way a Ctrl-C'd job does, so a calling shell or
      // script stops too; where the script's shell execs the command, npm exits with the agent's 0.
      expect([
        JSON.stringify({ code: null, signal: 'SIGINT' }),
        JSON.stringify({ code: 0, signal: null }),
      ]).toContain(JSON.stringify(end));
    },
    150_000,
  );

  it("the start script's own command exits 0 after SIGINT twice to its group", async () => {
    const run = launch('its command', writeConfig());
    running = run;
    await until(run, 'agent started', 90_000);
    const end = await ctrlC(run, TWICE);
    expectCleanStop(run);
    expect(end, run.output().slice(-4000)).toEqual({ code: 0, signal: null });
  }, 150_000);
});
