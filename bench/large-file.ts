/**
 * One large PDF (sparse: a one-page PDF whose middle is a stream of zeros): through the agent in its own
 * process (drop → uploaded, and the PUT alone: created → uploaded, from its journal; peak RSS from
 * /proc/<pid>/status VmHWM) against `curl -T` of the same file to an upload URL of the same sandbox.
 * Each file is read once before its run, as a file an ERP just wrote sits in the page cache: the
 * first reader of a sparse file otherwise pays for zero-filling 1 GiB of page cache (about 3 s
 * here), which fell on the agent's SHA-256 but was hidden in curl's upload.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { SEED } from '../src/sandbox/seed-ids.js';
import { sparsePdfEnds } from '../test/fixtures/inputs/hostile.js';
import { dropAll, finishAgentRun, startAgentRun, waitFinished } from './support/agent-run.js';
import { type SandboxInfo, startSandboxProcess } from './support/processes.js';
import { scratchDir } from './support/scratch.js';
import { RawClient } from './support/service.js';
import { medianRun, rotate, round } from './support/stats.js';

export interface LargeFileOptions {
  /** The compiled agent CLI (support/build-agent.ts). */
  mainJs: string;
  bytes: number;
  timeoutMs: number;
  /** Runs of the agent and of curl, alternating which goes first (default 1). */
  rounds?: number;
}

export interface LargeFileResult {
  scenario: 'large-file';
  bytes: number;
  agentDropToUploadedMiBps: number;
  agentPutMiBps: number;
  agentSeconds: number;
  agentPeakRssMiB: number | undefined;
  curlMiBps: number;
  curlSeconds: number;
  agentVsCurl: number;
  agentPutVsCurl: number;
  /**
   * Every run's figures, in run order. The throughputs above are the median runs', the peak RSS is
   * the highest of all runs (the target is a bound).
   */
  runs?: { agentMiBps: number[]; curlMiBps: number[]; agentPeakRssMiB: (number | undefined)[] };
}

const MIB = 1024 * 1024;

/** A one-page PDF whose middle is a stream of zeros, left a hole (sparse). */
function writeSparsePdf(file: string, bytes: number): void {
  const { head, tail } = sparsePdfEnds(bytes);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, tail, 0, tail.length, bytes - tail.length);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the file through once (into the page cache), a MiB at a time, then flushes every dirty
 * page: each column starts with the sandbox's disk idle, not still writing the last column's GiB.
 */
function warm(file: string): void {
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(MIB);
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
  execFileSync('sync');
}

async function curlUpload(info: SandboxInfo, file: string, timeoutMs: number): Promise<number> {
  const client = new RawClient(info, 1);
  let url: string;
  try {
    await client.fetchToken();
    url = (await client.createSingleFile(SEED.workflows.pdfEmail, path.basename(file))).url;
  } finally {
    await client.close();
  }
  const started = Date.now();
  const child = spawn(
    'curl',
    ['-sS', '--fail', '--cacert', info.paths.caCert, '-T', file, url, '-o', '/dev/null'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`curl -T exited ${code}`);
  return Date.now() - started;
}

interface AgentRun {
  dropToUploadedMs: number;
  putMs: number;
  peakRssMiB: number | undefined;
}

async function agentUpload(dir: string, info: SandboxInfo, options: LargeFileOptions): Promise<AgentRun> {
  const run = await startAgentRun(dir, info, {
    mainJs: options.mainJs,
    concurrency: 1,
    maxFileBytes: options.bytes * 2,
  });
  let agent: Awaited<ReturnType<typeof finishAgentRun>>;
  let dropped: Map<string, number>;
  try {
    writeSparsePdf(path.join(run.staging, 'large.pdf'), options.bytes);
    warm(path.join(run.staging, 'large.pdf'));
    dropped = dropAll(run, ['large.pdf']);
    await waitFinished(run, 1, options.timeoutMs, 100);
    agent = await finishAgentRun(run);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
  const times = agent.times.get('large.pdf');
  if (times?.uploaded === undefined || times.created === undefined)
    throw new Error('agent: large.pdf not uploaded');
  rmSync(run.archiveDir, { recursive: true, force: true });
  return {
    dropToUploadedMs: times.uploaded - dropped.get('large.pdf')!,
    putMs: times.uploaded - times.created,
    peakRssMiB: agent.peakRssMiB,
  };
}

async function curlRun(dir: string, info: SandboxInfo, options: LargeFileOptions): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'large.pdf');
  writeSparsePdf(file, options.bytes);
  warm(file);
  const ms = await curlUpload(info, file, options.timeoutMs);
  rmSync(file, { force: true });
  return ms;
}

export async function benchLargeFile(options: LargeFileOptions): Promise<LargeFileResult> {
  const dir = scratchDir('docex-bench-large-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const agentRuns: AgentRun[] = [];
    const curlRuns: number[] = [];
    for (let round = 1; round <= (options.rounds ?? 1); round++) {
      const runAgent = async () => {
        agentRuns.push(await agentUpload(path.join(dir, `agent-${round}`), sandbox.info, options));
      };
      const runCurl = async () => {
        curlRuns.push(await curlRun(path.join(dir, `curl-${round}`), sandbox.info, options));
      };
      // The agent first in odd rounds, curl first in even ones.
      for (const column of rotate([runAgent, runCurl], round - 1)) await column();
    }
    const mibps = (ms: number) => round(options.bytes / MIB / (ms / 1000));
    // Median by time: the median throughput's run.
    const agent = medianRun(agentRuns, (r) => -r.dropToUploadedMs);
    const curlMs = medianRun(curlRuns, (ms) => -ms);
    const peaks = agentRuns.map((r) => r.peakRssMiB && round(r.peakRssMiB));
    const known = peaks.filter((p): p is number => p !== undefined);
    return {
      scenario: 'large-file',
      bytes: options.bytes,
      agentDropToUploadedMiBps: mibps(agent.dropToUploadedMs),
      agentPutMiBps: mibps(agent.putMs),
      agentSeconds: round(agent.dropToUploadedMs / 1000, 2),
      agentPeakRssMiB: known.length > 0 ? Math.max(...known) : undefined,
      curlMiBps: mibps(curlMs),
      curlSeconds: round(curlMs / 1000, 2),
      agentVsCurl: round(curlMs / agent.dropToUploadedMs, 2),
      agentPutVsCurl: round(curlMs / agent.putMs, 2),
      runs: {
        agentMiBps: agentRuns.map((r) => mibps(r.dropToUploadedMs)),
        curlMiBps: curlRuns.map(mibps),
        agentPeakRssMiB: peaks,
      },
    };
  } finally {
    await sandbox.stop();
  }
}
