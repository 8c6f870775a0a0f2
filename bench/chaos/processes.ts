/**
 * The chaos runs' child processes: the sandbox (bench/chaos/sandbox-child.ts) and the agent
 * (`src/cli/main.ts start` under tsx, as an operator starts it), its JSON log lines read as they
 * come so a scenario knows when it started, which files had to wait and why.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { RunningSandbox } from '../../src/sandbox/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

export interface ChaosSandboxInfo {
  /** The hosts themselves (control API: `urls.control`). */
  urls: RunningSandbox['urls'];
  /** The origin pre-signed URLs name (a proxy, or the files host). */
  publicFilesUrl: string;
  paths: RunningSandbox['paths'];
}

export interface ChaosSandbox {
  info: ChaosSandboxInfo;
  /** Faults the injector answered so far, by HTTP status, plus `reset`. */
  injected(): Promise<Record<string, number>>;
  stop(): Promise<void>;
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

export async function startChaosSandbox(stateDir: string, filesPublicUrl?: string): Promise<ChaosSandbox> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(here, 'sandbox-child.ts'),
      JSON.stringify({ stateDir, ...(filesPublicUrl ? { filesPublicUrl } : {}) }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], cwd: root },
  );
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox process exited early (${code})`)));
  });
  lines.close();
  child.stdout!.resume();
  return {
    info: JSON.parse(first) as ChaosSandboxInfo,
    injected: () =>
      new Promise((resolve) => {
        const onMessage = (m: { type?: string; injected?: Record<string, number> }) => {
          if (m?.type !== 'injected') return;
          child.off('message', onMessage);
          resolve(m.injected ?? {});
        };
        child.on('message', onMessage);
        child.send({ type: 'injected' });
      }),
    stop: () => stopChild(child),
  };
}

export interface AgentProcess {
  child: ChildProcess;
  /** The "agent started" line was logged (recovery done, folders watched). */
  started: Promise<void>;
  exited: Promise<number | null>;
  /** Files that had to wait for a retry, and the codes they waited on (this process only). */
  waited: Map<string, Set<string>>;
  /** Files named in a warning (a retry, a broken download, a failed remote finish). */
  warned: Set<string>;
  /** Files whose job was created again (attempt 2 or later: an expired window, a lost answer). */
  recreated: Set<string>;
  /** Count of log lines by message, for the lines a scenario cares about. */
  seen: Map<string, number>;
  /**
   * Files this process holds by its log: taken (or taken over) and not yet archived, refused or
   * given up to another agent (several agents on one journal).
   */
  held: Set<string>;
  /** The last lines (stdout and stderr), for a failure message. */
  tail: string[];
  /** The ops endpoints' base URL, once logged (`ops endpoints listening`). */
  ops: Promise<string>;
  /** The webhook receiver's URL, once logged (`webhook receiver listening`; webhooks enabled). */
  webhookUrl: Promise<string>;
  /** Proofs this process wrote (`proof written`), by `<sendingEventId> <documentType>`. */
  proofsWritten: Map<string, number>;
  /** Webhook ids this process accepted (answered 202 and handled), in order. */
  webhooksAccepted: string[];
  /** Called with every JSON log line's message as it comes (a scenario waiting for one). */
  onMessage?: ((msg: string) => void) | undefined;
}

/** The journal's outage lines (src/pipeline/journal-outage.ts, src/journal/postgres/pool.ts). */
export const JOURNAL_DOWN = 'journal not answering: no new files taken until it does';
export const JOURNAL_BACK = 'journal answers again: intake resumed';
export const JOURNAL_IDLE_LOST = 'journal idle connection lost';
export const WEBHOOK_ACCEPTED = 'webhook accepted';
export const WEBHOOK_REPEATED = 'webhook repeated; already handled';
export const PROOF_WRITTEN = 'proof written';

const COUNTED = new Set([
  'file taken',
  'file archived',
  'file refused',
  'job created',
  'file must wait',
  JOURNAL_DOWN,
  JOURNAL_BACK,
  JOURNAL_IDLE_LOST,
  // Several agents on one journal (src/agent/leases.ts, src/pipeline/pipeline.ts).
  'file taken over',
  'lease lost: another agent took the file over; this agent stopped touching it',
  'file held by another agent: left to it',
  // The return path (src/returns/webhook-receiver.ts, proofs.ts).
  WEBHOOK_ACCEPTED,
  WEBHOOK_REPEATED,
  PROOF_WRITTEN,
]);

/** Lines that end a process's hold on a file (`held`). */
const RELEASED = new Set([
  'file archived',
  'file refused',
  'lease lost: another agent took the file over; this agent stopped touching it',
  'file held by another agent: left to it',
  'file left to another agent: this copy removed',
  'file recorded and finished before (the same drop): nothing left to do',
]);

/**
 * `env`: added to this process's environment (a test's crash point). `entry`: a compiled CLI
 * (buildAgent) instead of the sources under tsx, which start in a fraction of the time.
 */
export function startAgentProcess(
  configFile: string,
  env: Record<string, string> = {},
  entry?: string,
): AgentProcess {
  const cli = entry ? [entry] : ['--import', 'tsx', path.join(root, 'src', 'cli', 'main.ts')];
  const child = spawn(process.execPath, [...cli, 'start', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: root,
    env: { ...process.env, ...env },
  });
  const tail: string[] = [];
  const waited = new Map<string, Set<string>>();
  const seen = new Map<string, number>();
  const held = new Set<string>();
  const recreated = new Set<string>();
  const warned = new Set<string>();
  // DOCEX_CHAOS_AGENT_LOG=<file>: every agent line appended there, to follow a failed cell file by file.
  const fullLog = process.env['DOCEX_CHAOS_AGENT_LOG'];
  const keep = (line: string) => {
    if (fullLog) appendFileSync(fullLog, `${line}\n`);
    tail.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
    if (tail.length > 60) tail.shift();
  };
  let resolveOps: (url: string) => void = () => {};
  const ops = new Promise<string>((resolve) => {
    resolveOps = resolve;
  });
  let resolveWebhook: (url: string) => void = () => {};
  const webhookUrl = new Promise<string>((resolve) => {
    resolveWebhook = resolve;
  });
  const proofsWritten = new Map<string, number>();
  const webhooksAccepted: string[] = [];
  let resolveStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    resolveStarted = resolve;
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    keep(line);
    if (!line.startsWith('{')) return;
    let entry: {
      level?: string;
      msg?: string;
      file?: string;
      remotePath?: string;
      code?: string;
      attempt?: number;
      address?: string;
      listen?: string;
      path?: string;
      webhookId?: string;
      sendingEventId?: string;
      documentType?: string;
    };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    if (entry.msg === 'agent started') resolveStarted();
    if (entry.msg === 'ops endpoints listening' && entry.address) resolveOps(entry.address);
    if (entry.msg === 'webhook receiver listening' && entry.listen && entry.path) {
      resolveWebhook(`http://${entry.listen}${entry.path}`);
    }
    if (entry.msg === WEBHOOK_ACCEPTED && entry.webhookId) webhooksAccepted.push(entry.webhookId);
    if (entry.msg === PROOF_WRITTEN && entry.sendingEventId) {
      const key = `${entry.sendingEventId} ${entry.documentType ?? '?'}`;
      proofsWritten.set(key, (proofsWritten.get(key) ?? 0) + 1);
    }
    if (entry.msg) agentProcess.onMessage?.(entry.msg);
    if (entry.msg && COUNTED.has(entry.msg)) seen.set(entry.msg, (seen.get(entry.msg) ?? 0) + 1);
    const named = entry.file ?? (entry.remotePath ? path.posix.basename(entry.remotePath) : undefined);
    if ((entry.level === 'warn' || entry.level === 'error' || entry.level === 'fatal') && named) {
      warned.add(named);
    }
    if ((entry.msg === 'file taken' || entry.msg === 'file taken over') && entry.file) held.add(entry.file);
    if (entry.msg && RELEASED.has(entry.msg) && entry.file) held.delete(entry.file);
    if (entry.msg === 'job created' && entry.file && (entry.attempt ?? 1) > 1) recreated.add(entry.file);
    if (entry.msg === 'file must wait' && entry.file) {
      const codes = waited.get(entry.file) ?? new Set<string>();
      codes.add(entry.code ?? '?');
      waited.set(entry.file, codes);
    }
  });
  createInterface({ input: child.stderr! }).on('line', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const agentProcess: AgentProcess = {
    child,
    started,
    exited,
    waited,
    warned,
    recreated,
    seen,
    held,
    tail,
    ops,
    webhookUrl,
    proofsWritten,
    webhooksAccepted,
  };
  return agentProcess;
}
