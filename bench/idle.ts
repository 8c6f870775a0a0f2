/**
 * Idle (issue 18): the agent with ten local drop folders and nothing to do, started as the
 * shipped launchers start it (compiled JavaScript, the unit's Node flags) against a sandbox
 * process, its return path and ops endpoint on as an installed agent has them. After it has been
 * ready for `settleSeconds`, a window of `windowSeconds` measures:
 * - wake-ups per second: voluntary context switches of every thread of the process, from
 *   /proc/PID/task/TID/status. A thread woken from epoll_wait or a futex goes back to sleep with
 *   one (the figure `strace -c -f` shows as epoll_pwait + futex calls, without ptrace's own cost).
 *   Involuntary switches are left out: they are preemptions of a running thread, which follow the
 *   machine's load (on a loaded machine they tripled the count), not the agent's wake-ups.
 * - CPU: (utime + stime) over the window, as a share of one core.
 * - RSS: VmRSS at the end of the window, and how much of it is file-backed (RssFile: pages of the
 *   node binary and shared libraries, which a process cannot give back).
 * - The floor: VmRSS of an empty node process with the same flags (`node <flags> -e
 *   'setInterval(() => {}, 1e3)'`), started with the window and read at its end.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { JOURNAL_FILE } from '../src/config/index.js';
import { SEED } from '../src/sandbox/seed-ids.js';
import { freePort } from '../test/support/free-port.js';
import {
  agentNodeFlags,
  cpuMs,
  startAgentProcess,
  startSandboxProcess,
  stopChild,
  waitReady,
} from './support/processes.js';
import { scratchDir } from './support/scratch.js';
import { agentConfigFile } from './support/service.js';
import { round } from './support/stats.js';

export interface IdleOptions {
  mainJs: string;
  folders: number;
  /** Time after /readyz answers 200 before the window starts (the issue measures after 60 s). */
  settleSeconds: number;
  windowSeconds: number;
}

export interface IdleResult {
  scenario: 'idle';
  folders: number;
  settleSeconds: number;
  windowSeconds: number;
  wakeupsPerSecond: number;
  cpuPercentOfCore: number;
  rssMB: number;
  /** The file-backed part of rssMB (RssFile); absent from runs before it was measured. */
  rssFileMB?: number;
  /** VmRSS of an empty node process with the agent's flags: what no agent change can go below. */
  emptyNodeRssMB?: number;
}

export const IDLE_TARGETS = { wakeupsPerSecond: 5, cpuPercentOfCore: 0.1, rssMB: 80 } as const;

/** Voluntary context switches of every thread of a live process (each one a sleep after a wake-up). */
export function contextSwitches(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const m = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(status);
    if (m) total += Number(m[1]);
  }
  return total;
}

/** A resident-set figure (VmRSS, RssFile) of a live process, in bytes. */
function rssBytes(pid: number, field = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) * 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchIdle(options: IdleOptions): Promise<IdleResult> {
  const dir = scratchDir('docex-bench-idle-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const opsPort = await freePort();
    const configFile = agentConfigFile(dir, sandbox.info, {
      log: { level: 'info' },
      ops: { listen: `127.0.0.1:${opsPort}` },
      folders: Array.from({ length: options.folders }, (_, i) => ({
        name: `folder-${i}`,
        source: { type: 'local', path: `./in/folder-${i}` },
        create: true,
        workflowId: SEED.workflows.pdfEmail,
        archiveDir: `./archive/folder-${i}`,
        errorDir: `./error/folder-${i}`,
      })),
      returns: {
        statuses: { target: { type: 'local', path: './out/statuses' } },
        proofs: { target: { type: 'local', path: './out/proofs' } },
      },
      peppolInbox: { target: { type: 'local', path: './out/peppol-inbox' } },
    });
    const child = await startAgentProcess(options.mainJs, configFile, path.join(dir, 'state', JOURNAL_FILE));
    try {
      await waitReady(child, opsPort);
      await sleep(options.settleSeconds * 1000);
      const pid = child.pid!;
      const empty = spawn(process.execPath, [...agentNodeFlags(), '-e', 'setInterval(() => {}, 1e3)'], {
        stdio: 'ignore',
      });
      const switchesBefore = contextSwitches(pid);
      const cpuBefore = cpuMs(pid)!;
      const startedAt = performance.now();
      await sleep(options.windowSeconds * 1000);
      const seconds = (performance.now() - startedAt) / 1000;
      const switches = contextSwitches(pid) - switchesBefore;
      const cpu = cpuMs(pid)! - cpuBefore;
      const emptyNodeRss = rssBytes(empty.pid!);
      empty.kill();
      return {
        scenario: 'idle',
        folders: options.folders,
        settleSeconds: options.settleSeconds,
        windowSeconds: options.windowSeconds,
        wakeupsPerSecond: round(switches / seconds, 1),
        cpuPercentOfCore: round(cpu / 10 / seconds, 3),
        rssMB: round(rssBytes(pid) / 1e6, 1),
        rssFileMB: round(rssBytes(pid, 'RssFile') / 1e6, 1),
        emptyNodeRssMB: round(emptyNodeRss / 1e6, 1),
      };
    } finally {
      await stopChild(child);
    }
  } finally {
    await sandbox.stop();
  }
}
