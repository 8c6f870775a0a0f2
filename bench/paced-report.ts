/** The paced scenario's rows, targets and notes for bench/report.ts (issue 31). */
import type { PacedResult } from './paced.js';

type Outcome = PacedResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
/** The rate over the window is within this share of pace.rate. */
export const RATE_TOLERANCE_PERCENT = 2;

export function pacedRows(r: Outcome): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [['paced', 'failed', r.error, '', '', '']];
  const { rate, storm } = r;
  return [
    [
      `paced, pace.rate ${rate.perMinute}/min, over ${rate.windowSeconds} s`,
      'job creates answered',
      `${rate.measuredPerMinute}/min (${rate.createsInWindow} creates)`,
      '',
      '',
      `${rate.errorPercent > 0 ? '+' : ''}${rate.errorPercent} % (target within ±${RATE_TOLERANCE_PERCENT} %)`,
    ],
    [
      `paced, ${storm.files} files under a 429 storm (${storm.burst429} with Retry-After 1 s, then ${storm.errorRate * 100} % of creates)`,
      'drop → last upload',
      `${storm.filesPerSecond} files/s (${storm.seconds} s)`,
      '',
      '',
      `${storm.refused} refused (target 0); ${storm.backoffs ?? '?'} backoffs, ${storm.waitedSeconds ?? '?'} s waited in the pace`,
    ],
  ];
}

export function pacedTargets(r: Outcome): string[] {
  if (r === undefined || isError(r)) return [];
  return [
    `Paced rate within ±${RATE_TOLERANCE_PERCENT} % of pace.rate over ${r.rate.windowSeconds} s: ${r.rate.errorPercent} % — ${mark(Math.abs(r.rate.errorPercent) <= RATE_TOLERANCE_PERCENT)}.`,
    `A backlog of ${r.storm.files} files under a 429 storm with no file refused: ${r.storm.refused} refused, ${r.storm.archived} archived — ${mark(r.storm.refused === 0 && r.storm.archived === r.storm.files)}.`,
  ];
}

export const PACED_NOTES = `## Paced (issue 31)
- The agent as installed against a sandbox process, one fresh agent per column, the backlog renamed
  into its drop folder at once.
- Rate: \`pace.rate\` set and the return path off, so the job creates are every call the pace
  counts (uploads go to the pre-signed files host, not paced). The window opens at the first create
  answered; the token bucket holds 600 ms of calls, so a window of 60 s may pass 1 % more than the
  rate, a shorter window (a quick run) relatively more.
- Storm: a burst of 429s with \`Retry-After: 1\` to the first creates (20 per 1,000 files), then 5 %
  of every create refused with 429 and no Retry-After, for the whole run. Each 429 halves the
  pace's concurrency (once per burst) and a Retry-After holds every call; a refused create is tried
  again. The backoffs and the time waited are the agent's own metrics (\`docex_api_backoffs_total\`,
  \`docex_api_pace_wait_seconds_sum\`).`;
