/**
 * The agent as its own process (`tsx test/agent/support/agent-child.ts <config>`), for tests that
 * kill it or send it signals: its log lines parsed as they come, waits on a log message, the last
 * lines kept for failure messages. And the CLI as a user runs it.
 */
import { type ChildProcess, type ChildProcessByStdio, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { SEED } from '../../src/sandbox/seed-ids.js';
import type { TestSandbox } from '../sandbox/sandbox-harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = fileURLToPath(new URL('../agent/support/agent-child.ts', import.meta.url));

/** `docex-agent <args>` from the sources, stdout and stderr piped (not a terminal). */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A PDF drop folder `pdf` in `./in` (renamed in), archiving to `./archive`, rejecting to `./error`. */
export const PDF_FOLDER = {
  name: 'pdf',
  source: { type: 'local', path: './in' },
  create: true,
  workflowId: SEED.workflows.pdfEmail,
  archiveDir: './archive',
  errorDir: './error',
  stability: { kind: 'rename-in' },
} as const;

/**
 * Writes `<dir>/agent.yaml` for an agent process: the sandbox's connection fragment, state in
 * `./state`, info logs, then `settings`. Answers the file's path.
 */
export function writeAgentConfig(
  dir: string,
  sandbox: TestSandbox,
  settings: Record<string, unknown>,
): string {
  const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
  const configFile = path.join(dir, 'agent.yaml');
  writeFileSync(
    configFile,
    stringify({ ...fragment, stateDir: './state', log: { level: 'info' }, ...settings }),
  );
  return configFile;
}

/** How many output lines `tail` keeps. */
const TAIL_LINES = 200;

export type LogRecord = Record<string, unknown>;

export interface AgentProcess {
  child: ChildProcess;
  /** Every JSON log line of stdout so far, parsed, in order. */
  records: LogRecord[];
  /** The last lines of stdout and chunks of stderr, to show when a test fails. */
  tail: string[];
  /** Calls `listener` with each log line from now on. */
  onRecord(listener: (record: LogRecord) => void): void;
  /** Whether a log line with this `msg` was written. */
  seen(msg: string): boolean;
  /** Resolves at the first log line with this `msg` (at once when one was written already); never rejects. */
  logged(msg: string): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the agent on `configFile` (at `DOCEX_LOG_LEVEL=info` unless `env` says otherwise).
 * `prefix`: a command that execs the agent's (`setpriv …` to start it with fewer privileges).
 */
export function spawnAgent(
  configFile: string,
  env: NodeJS.ProcessEnv = {},
  prefix: readonly string[] = [],
): AgentProcess {
  const [command, ...args] = [...prefix, process.execPath, '--import', 'tsx', CHILD, configFile];
  const child = spawn(command!, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DOCEX_LOG_LEVEL: 'info', ...env },
  });
  const records: LogRecord[] = [];
  const tail: string[] = [];
  const listeners: Array<(record: LogRecord) => void> = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
  };
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      keep(line);
      let record: LogRecord;
      try {
        record = JSON.parse(line) as LogRecord;
      } catch {
        continue; // not a log line
      }
      records.push(record);
      for (const listener of listeners) listener(record);
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => keep(chunk.toString('utf8')));
  const seen = (msg: string) => records.some((r) => r['msg'] === msg);
  return {
    child,
    records,
    tail,
    onRecord: (listener) => listeners.push(listener),
    seen,
    logged: (msg) =>
      new Promise<void>((resolve) => {
        if (seen(msg)) resolve();
        else listeners.push((record) => record['msg'] === msg && resolve());
      }),
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
  };
}
