/** Child processes of the benchmarks: the sandbox and the agent each in their own process. */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AGENT_NODE_FLAGS } from '../../src/ops/node-flags.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface SandboxInfo {
  urls: RunningSandbox['urls'];
  paths: RunningSandbox['paths'];
  clientId: string;
}

export interface SandboxProcess {
  info: SandboxInfo;
  child: ChildProcess;
  stop(): Promise<void>;
}

function tsxNode(nodeFlags: string[], args: string[], stdout: 'pipe' | 'ignore'): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, '--import', 'tsx', ...args], {
    stdio: ['ignore', stdout, 'inherit'],
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** BENCH_SANDBOX_PROF=<dir> writes a CPU profile of the sandbox there. */
export async function startSandboxProcess(stateDir: string): Promise<SandboxProcess> {
  const profileDir = process.env['BENCH_SANDBOX_PROF'];
  const prof = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const child = tsxNode(prof, [path.join(here, 'sandbox-child.ts'), stateDir], 'pipe');
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox process exited early (${code})`)));
  });
  lines.close();
  child.stdout!.resume();
  return { info: JSON.parse(first) as SandboxInfo, child, stop: () => stopChild(child) };
}

/**
 * The agent from its compiled CLI (`main.js start --config`); resolves once its journal exists
 * (`journal`: the SQLite file to wait for, or a check that answers true once a PostgreSQL journal's
 * tables are there).
 * BENCH_AGENT_PROF=<dir> writes a CPU profile of the agent there; BENCH_AGENT_STDOUT=<prefix> keeps
 * each agent's stdout (its log, and V8's output of flags such as --trace-gc given through
 * BENCH_AGENT_NODE_FLAGS) in `<prefix>.<epoch ms>`.
 */
export async function startAgentProcess(
  mainJs: string,
  configFile: string,
  journal: string | (() => Promise<boolean>),
  /**
   * Each line of its stdout (its log), read from the spawn on; answer false once no more are
   * wanted (the rest is then read and dropped, so the agent never blocks on a full pipe).
   */
  onLine?: (line: string) => boolean,
): Promise<ChildProcess> {
  const profileDir = process.env['BENCH_AGENT_PROF'];
  const prof = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  // As the shipped launchers start it (systemd unit, container image).
  const stdoutPrefix = process.env['BENCH_AGENT_STDOUT'];
  const stdout = onLine ? 'pipe' : stdoutPrefix ? openSync(`${stdoutPrefix}.${Date.now()}`, 'w') : 'ignore';
  const child = spawn(
    process.execPath,
    [...agentNodeFlags(), ...prof, mainJs, 'start', '--config', configFile],
    { stdio: ['ignore', stdout, 'inherit'] },
  );
  if (typeof stdout === 'number') closeSync(stdout);
  if (onLine && child.stdout) {
    const out = child.stdout;
    const lines = createInterface({ input: out });
    lines.on('line', (line) => {
      if (onLine(line)) return;
      lines.close();
      out.resume();
    });
  }
  const deadline = Date.now() + 30_000;
  const exists = typeof journal === 'string' ? async () => existsSync(journal) : journal;
  while (!(await exists())) {
    if (child.exitCode !== null) throw new Error(`agent exited early (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error('agent did not start within 30 s');
    await new Promise((r) => setTimeout(r, 25));
  }
  // The folder watch starts right after the journal is opened.
  await new Promise((r) => setTimeout(r, 300));
  return child;
}

/**
 * The Node flags the agent runs with: the shipped ones, then any given to try against them
 * (`BENCH_AGENT_NODE_FLAGS="--flag …"`; a later flag wins).
 */
export function agentNodeFlags(): string[] {
  const extra = (process.env['BENCH_AGENT_NODE_FLAGS'] ?? '').split(' ').filter(Boolean);
  return [...AGENT_NODE_FLAGS, ...extra];
}

/** CPU time (user + system) a live process has used, in ms; undefined off Linux. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

// USER_HZ: 100 on every Linux architecture Node runs on.
const CLOCK_TICKS_PER_SECOND = 100;

/** Peak resident set (VmHWM) of a live process, in MiB; undefined off Linux. */
export function peakRssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Polls the agent's /readyz until it answers 200: its folders are watched and its token and
 * workflows fetched, so a file dropped from then on measures the agent's work, not its start-up.
 */
export async function waitReady(child: ChildProcess, opsPort: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`agent exited early (${child.exitCode})`);
    const status = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`agent not ready within ${timeoutMs} ms (/readyz ${status})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
