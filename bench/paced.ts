/**
 * Paced (issue 31): the one pace of the service host, measured on the agent as installed against a
 * sandbox process. Two columns, each a fresh agent on a backlog renamed into its drop folder:
 * - rate: `pace.rate` set, the return path off (so job creates are every paced call); the creates
 *   answered in a window that opens at the first one, against the rate;
 * - storm: a backlog under a storm of 429s on the creates (a burst with Retry-After, then a share
 *   of every create refused without one); the time from the drop to the last upload, the
 *   files refused (none may be), and what the agent's metrics say it backed off and waited.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { writeBacklog } from './backlog.js';
import { type AgentRun, dropAll, finishAgentRun, startAgentRun, waitFinished } from './support/agent-run.js';
import { startSandboxProcess } from './support/processes.js';
import { SandboxControl } from './support/sandbox-control.js';
import { scratchDir } from './support/scratch.js';
import { round } from './support/stats.js';

export interface PacedOptions {
  mainJs: string;
  /** pace.rate of the rate column, calls per minute. */
  ratePerMinute: number;
  /** The rate column's window, s. */
  rateSeconds: number;
  /** Files of the storm column's backlog. */
  stormFiles: number;
  concurrency: number;
  timeoutMs: number;
}

export interface PacedResult {
  scenario: 'paced';
  rate: {
    perMinute: number;
    windowSeconds: number;
    /** Job creates answered in the window (every paced call: the return path is off). */
    createsInWindow: number;
    measuredPerMinute: number;
    /** (measured − rate) / rate, %. */
    errorPercent: number;
  };
  storm: {
    files: number;
    /** 429s with Retry-After: 1 to the first creates, then this share of creates refused with 429. */
    burst429: number;
    errorRate: number;
    archived: number;
    refused: number;
    /** Backlog dropped → last upload, s. */
    seconds: number;
    filesPerSecond: number;
    /** docex_api_backoffs_total of the intake, 429. */
    backoffs: number | undefined;
    /** docex_api_pace_wait_seconds_sum of the intake. */
    waitedSeconds: number | undefined;
  };
}

/** The storm: a burst of this many 429s (Retry-After 1 s) per 1,000 files, then this share refused. */
const BURST_PER_1000 = 20;
const STORM_ERROR_RATE = 0.05;

async function stagedRun(
  dir: string,
  files: number,
  start: (dir: string) => Promise<AgentRun>,
): Promise<{ run: AgentRun; names: string[] }> {
  const run = await start(dir);
  await writeBacklog(run.staging, files);
  return { run, names: readdirSync(run.staging).sort() };
}

async function metric(run: AgentRun, line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${run.opsPort}/metrics`)).text();
  for (const l of text.split('\n')) {
    const m = line.exec(l);
    if (m) return Number(m[1]);
  }
  return undefined;
}

async function rateColumn(
  dir: string,
  info: Parameters<typeof startAgentRun>[1],
  o: PacedOptions,
): Promise<PacedResult['rate']> {
  // More files than the window can take: the pace, not the backlog, ends it.
  const files = Math.ceil(((o.ratePerMinute * o.rateSeconds) / 60) * 1.3) + 20;
  const { run, names } = await stagedRun(dir, files, (d) =>
    startAgentRun(d, info, {
      mainJs: o.mainJs,
      concurrency: o.concurrency,
      extra: { pace: { rate: `${o.ratePerMinute}/min` }, returns: { enabled: false } },
    }),
  );
  try {
    dropAll(run, names);
    const first = await waitFinished(run, 1, o.timeoutMs, 50);
    await new Promise((r) => setTimeout(r, o.rateSeconds * 1000 + 2000 - (Date.now() - first.at)));
    const { times } = await finishAgentRun(run);
    const created = [...times.values()].flatMap((t) => (t.created === undefined ? [] : [t.created]));
    const from = Math.min(...created);
    const inWindow = created.filter((t) => t - from < o.rateSeconds * 1000).length;
    const measured = (inWindow * 60) / o.rateSeconds;
    return {
      perMinute: o.ratePerMinute,
      windowSeconds: o.rateSeconds,
      createsInWindow: inWindow,
      measuredPerMinute: round(measured),
      errorPercent: round(((measured - o.ratePerMinute) / o.ratePerMinute) * 100, 2),
    };
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
}

async function stormColumn(
  dir: string,
  info: Parameters<typeof startAgentRun>[1],
  control: SandboxControl,
  o: PacedOptions,
): Promise<PacedResult['storm']> {
  const burst429 = Math.max(10, Math.round((o.stormFiles * BURST_PER_1000) / 1000));
  const { run, names } = await stagedRun(dir, o.stormFiles, (d) =>
    startAgentRun(d, info, {
      mainJs: o.mainJs,
      concurrency: o.concurrency,
      extra: { returns: { enabled: false } },
    }),
  );
  try {
    await control.addFault({
      route: '/jobs/single-file',
      method: 'POST',
      burst429: { count: burst429, retryAfterSeconds: 1 },
    });
    await control.addFault({
      route: '/jobs/single-file',
      method: 'POST',
      errorRate: STORM_ERROR_RATE,
      status: 429,
    });
    const dropped = Math.min(...dropAll(run, names).values());
    const done = await waitFinished(run, o.stormFiles, o.timeoutMs, 500);
    const backoffs = await metric(run, /^docex_api_backoffs_total\{caller="intake",status="429"\} (\d+)$/);
    const waitedSeconds = await metric(
      run,
      /^docex_api_pace_wait_seconds_sum\{caller="intake"\} ([\d.e+-]+)$/,
    );
    const { times } = await finishAgentRun(run);
    const uploaded = [...times.values()].flatMap((t) => (t.uploaded === undefined ? [] : [t.uploaded]));
    // From the drop: the storm's first 429s come before any create is answered.
    const seconds = (Math.max(...uploaded) - dropped) / 1000;
    return {
      files: o.stormFiles,
      burst429,
      errorRate: STORM_ERROR_RATE,
      archived: done.archived,
      refused: done.refused,
      seconds: round(seconds),
      filesPerSecond: round(done.archived / Math.max(seconds, 0.001)),
      backoffs,
      waitedSeconds: waitedSeconds === undefined ? undefined : round(waitedSeconds),
    };
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
}

export async function benchPaced(options: PacedOptions): Promise<PacedResult> {
  const dir = scratchDir('docex-bench-paced-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  const control = new SandboxControl(sandbox.info, 2);
  try {
    const rate = await rateColumn(path.join(dir, 'rate'), sandbox.info, options);
    const storm = await stormColumn(path.join(dir, 'storm'), sandbox.info, control, options);
    return { scenario: 'paced', rate, storm };
  } finally {
    await control.close();
    await sandbox.stop();
  }
}
