/** The idle scenario's rows, targets and notes for bench/report.ts (issue 18). */
import { IDLE_TARGETS, type IdleResult } from './idle.js';

type Outcome = IdleResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');

export function idleRows(r: Outcome): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [['idle', 'failed', r.error, '', '', '']];
  const name = `idle, ${r.folders} local folders, after ${r.settleSeconds} s ready, over ${r.windowSeconds} s`;
  return [
    [
      name,
      'wake-ups/s (all threads)',
      `${r.wakeupsPerSecond}`,
      '',
      '',
      `target ≤ ${IDLE_TARGETS.wakeupsPerSecond}`,
    ],
    [
      name,
      'CPU, % of one core',
      `${r.cpuPercentOfCore} %`,
      '',
      '',
      `target < ${IDLE_TARGETS.cpuPercentOfCore} %`,
    ],
    [name, 'RSS', `${r.rssMB} MB`, '', '', `target < ${IDLE_TARGETS.rssMB} MB`],
  ];
}

export function idleTargets(r: Outcome): string[] {
  if (r === undefined || isError(r)) return [];
  return [
    `Idle wake-ups ≤ ${IDLE_TARGETS.wakeupsPerSecond}/s: ${r.wakeupsPerSecond}/s — ${mark(r.wakeupsPerSecond <= IDLE_TARGETS.wakeupsPerSecond)}.`,
    `Idle CPU < ${IDLE_TARGETS.cpuPercentOfCore} % of a core: ${r.cpuPercentOfCore} % — ${mark(r.cpuPercentOfCore < IDLE_TARGETS.cpuPercentOfCore)}.`,
    `Idle RSS < ${IDLE_TARGETS.rssMB} MB: ${r.rssMB} MB — ${mark(r.rssMB < IDLE_TARGETS.rssMB)}.`,
  ];
}

export const IDLE_NOTES = `## Idle (issue 18)
- The agent as installed (compiled, the unit's Node flags) with ten local drop folders, its
  statuses, proofs and Peppol inbox outputs and its ops endpoint on, against a sandbox process;
  nothing is dropped. The window starts after the agent has been ready for the settle time.
- Wake-ups are the context switches of all the process's threads over the window (each is a
  sleeping thread woken: a timer, a poll, a thread-pool task), read from /proc, so the figure is
  not inflated by ptrace as \`strace -c -f -p PID\` would be. CPU is utime + stime over the
  window; RSS is VmRSS at its end (MB = 10^6 bytes).
`;
