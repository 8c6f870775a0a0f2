/**
 * Burst: N small PDFs dropped at once. Three columns against one sandbox process, same
 * concurrency: the agent in its own process (drop → uploaded from its journal), a bash + curl
 * script (curl-upload.sh, a curl process per request), and a bare keep-alive undici client doing
 * only create + PUT (the ceiling). Latency of a file: its upload's end minus its drop (for the two
 * scripts every file is "dropped" when the run starts).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { SEED } from '../src/sandbox/seed-ids.js';
import { dropAll, type FileTimes, finishAgentRun, startAgentRun, waitFinished } from './support/agent-run.js';
import type { BenchJournal } from './support/bench-postgres.js';
import { cpuMs, type SandboxInfo, startSandboxProcess } from './support/processes.js';
import { SandboxControl } from './support/sandbox-control.js';
import { scratchDir } from './support/scratch.js';
import { RawClient, secretFiles } from './support/service.js';
import { medianRun, percentile, pool, rotate, round } from './support/stats.js';

export interface BurstOptions {
  /** The compiled agent CLI (support/build-agent.ts). */
  mainJs: string;
  files: number;
  concurrency: number;
  /** Per column. */
  timeoutMs: number;
  /** Runs of each column, their order rotated each round; the median run is reported (default 1). */
  rounds?: number;
}

export interface ColumnResult {
  column: string;
  files: number;
  seconds: number;
  filesPerSecond: number;
  p50Ms: number;
  p95Ms: number;
  /** CPU the sandbox process spent per file during this column (what the service side costs). */
  sandboxCpuMsPerFile?: number | undefined;
  /** Files/s of every run of the column, in run order (the figures above are the median run's). */
  runs?: number[];
}

/**
 * Where a file's time went in the agent, from its journal history: the median of each step (ms).
 * `drop→claimed`: the wait for the scheduler, then the claim, the hash and the inspection of a
 * small file (read and inspected before its claim is recorded: claimed, validated and creating are
 * one commit, so the next two steps show 0); `creating→created`: the send gate (its fsync) and the
 * create, `created→uploaded`: the upload (each with its wait for a call's place, where the agent
 * has one); `uploaded→done`: the archive and the done move. `placeMsPerFile`: how long
 * each of the `concurrency` places spends per file over the run (Little's law: concurrency × run
 * time / files); `createUploadMs`: the mean of creating→uploaded; `inCallPhase`: the files between
 * creating and uploaded on average (Little's law again). With one file per place (main before
 * issue 30) 1 − inCallPhase / concurrency is the share of a place's time outside its file's create
 * and upload; with the lookahead more files than places are in that phase, waiting for a place.
 */
export interface StepBreakdown {
  medianMs: Record<string, number>;
  placeMsPerFile: number;
  createUploadMs: number;
  inCallPhase: number;
}

const STEPS = [
  ['drop→claimed', 'dropped', 'claimed'],
  ['claimed→validated', 'claimed', 'validated'],
  ['validated→creating', 'validated', 'creating'],
  ['creating→created', 'creating', 'created'],
  ['created→uploaded', 'created', 'uploaded'],
  ['uploaded→done', 'uploaded', 'done'],
] as const;

export function stepBreakdown(
  times: ReadonlyMap<string, FileTimes>,
  dropped: ReadonlyMap<string, number>,
  run: { concurrency: number; seconds: number },
): StepBreakdown {
  const medianMs: Record<string, number> = {};
  for (const [label, from, to] of STEPS) {
    const spans: number[] = [];
    for (const [name, t] of times) {
      const start = from === 'dropped' ? dropped.get(name) : t[from];
      const end = t[to];
      if (start !== undefined && end !== undefined) spans.push(end - start);
    }
    medianMs[label] = spans.length > 0 ? round(percentile(spans, 0.5), 1) : Number.NaN;
  }
  let createUpload = 0;
  for (const t of times.values()) createUpload += (t.uploaded ?? 0) - (t.creating ?? 0);
  const createUploadMs = createUpload / times.size;
  const placeMsPerFile = (run.concurrency * run.seconds * 1000) / times.size;
  return {
    medianMs,
    placeMsPerFile: round(placeMsPerFile, 1),
    createUploadMs: round(createUploadMs, 1),
    inCallPhase: round((run.concurrency * createUploadMs) / placeMsPerFile, 1),
  };
}

/** The breakdown as one line for the console. */
export function stepLine(steps: StepBreakdown): string {
  const parts = Object.entries(steps.medianMs).map(([label, ms]) => `${label} ${ms}`);
  return (
    `agent steps, median ms: ${parts.join(', ')}; per file a place spends ${steps.placeMsPerFile} ms, ` +
    `creating→uploaded ${steps.createUploadMs} ms (mean): ${steps.inCallPhase} files in it on average`
  );
}

export interface BurstResult {
  scenario: 'burst';
  files: number;
  concurrency: number;
  pdfBytes: number;
  agent: ColumnResult & {
    peakRssMiB: number | undefined;
    cpuMsPerFile?: number | undefined;
    steps?: StepBreakdown | undefined;
  };
  curl: ColumnResult;
  ceiling: ColumnResult;
  agentVsCurl: number;
  agentVsCeiling: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** One small PDF, and N distinct copies of it (a trailing comment line; the agent refuses duplicates). */
export async function writePdfs(dir: string, files: number): Promise<{ names: string[]; bytes: number }> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawText('docex-agent benchmark', {
    x: 50,
    y: 780,
    size: 12,
    font: await doc.embedFont(StandardFonts.Helvetica),
  });
  const base = Buffer.from(await doc.save());
  mkdirSync(dir, { recursive: true });
  const names: string[] = [];
  for (let i = 0; i < files; i++) {
    const name = `bench-${String(i).padStart(6, '0')}.pdf`;
    writeFileSync(path.join(dir, name), Buffer.concat([base, Buffer.from(`% bench file ${i}\n`)]));
    names.push(name);
  }
  return { names, bytes: base.length };
}

function column(
  name: string,
  startedAt: number,
  doneAt: readonly number[],
  latencies: readonly number[],
): ColumnResult {
  const seconds = (Math.max(...doneAt) - startedAt) / 1000;
  return {
    column: name,
    files: doneAt.length,
    seconds: round(seconds, 2),
    filesPerSecond: round(doneAt.length / seconds),
    p50Ms: Math.round(percentile(latencies, 0.5)),
    p95Ms: Math.round(percentile(latencies, 0.95)),
  };
}

/**
 * The agent on a burst. `journal`: SQLite in its state folder (default) or a PostgreSQL database;
 * `afterStop`: see finishAgentRun.
 */
export async function agentColumn(
  dir: string,
  info: SandboxInfo,
  options: BurstOptions,
  journal?: BenchJournal,
  afterStop?: () => Promise<void>,
) {
  const run = await startAgentRun(dir, info, {
    mainJs: options.mainJs,
    concurrency: options.concurrency,
    ...(journal ? { journal } : {}),
  });
  const { names } = await writePdfs(run.staging, options.files);
  try {
    const cpuAtDrop = cpuMs(run.child.pid);
    const dropped = dropAll(run, names);
    const startedAt = Math.min(...dropped.values());
    await waitFinished(run, names.length, options.timeoutMs);
    const { peakRssMiB, cpuMs: cpuAtEnd, times } = await finishAgentRun(run, afterStop);
    const doneAt: number[] = [];
    const latencies: number[] = [];
    for (const name of names) {
      const uploaded = times.get(name)?.uploaded;
      if (uploaded === undefined) throw new Error(`agent: ${name} was not uploaded`);
      doneAt.push(uploaded);
      latencies.push(uploaded - dropped.get(name)!);
    }
    const result = column('agent', startedAt, doneAt, latencies);
    const steps = stepBreakdown(times, dropped, {
      concurrency: options.concurrency,
      seconds: result.seconds,
    });
    // Printed as each run ends: the report keeps only the median run's.
    console.log(`  ${stepLine(steps)}`);
    return {
      ...result,
      peakRssMiB: peakRssMiB && round(peakRssMiB),
      cpuMsPerFile: perFile(cpuAtEnd, cpuAtDrop, names.length),
      steps,
    };
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
}

async function ceilingColumn(dir: string, info: SandboxInfo, options: BurstOptions): Promise<ColumnResult> {
  const { names } = await writePdfs(dir, options.files);
  const client = new RawClient(info, options.concurrency);
  try {
    await client.fetchToken();
    const startedAt = Date.now();
    const doneAt = await pool(names, options.concurrency, async (name) => {
      const job = await client.createSingleFile(SEED.workflows.pdfEmail, name);
      await client.put(job.url, readFileSync(path.join(dir, name)));
    });
    return column(
      'keep-alive client (ceiling)',
      startedAt,
      doneAt,
      doneAt.map((t) => t - startedAt),
    );
  } finally {
    await client.close();
  }
}

async function curlColumn(dir: string, info: SandboxInfo, options: BurstOptions): Promise<ColumnResult> {
  const filesDir = path.join(dir, 'files');
  const { names } = await writePdfs(filesDir, options.files);
  const secrets = secretFiles(info);
  const startedAt = Date.now();
  const child = spawn('bash', [path.join(here, 'curl-upload.sh')], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      CA: info.paths.caCert,
      CERT: info.paths.clientCert,
      KEY: info.paths.clientKey,
      API: info.urls.api,
      AUTH: info.urls.auth,
      WF: SEED.workflows.pdfEmail,
      CLIENT_ID: info.clientId,
      SECRET_FILE: secrets.clientSecretFile,
      APIKEY_FILE: secrets.apiKeyFile,
      WORK: dir,
      P: String(options.concurrency),
    },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stdin.end(`${names.map((n) => path.join(filesDir, n)).join('\n')}\n`);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const doneAt = out
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.split(' ')[1]));
  if (code !== 0 || doneAt.length !== names.length) {
    throw new Error(`curl script: exit ${code}, ${doneAt.length} of ${names.length} files uploaded`);
  }
  return column(
    'bash + curl per file',
    startedAt,
    doneAt,
    doneAt.map((t) => t - startedAt),
  );
}

function perFile(end: number | undefined, start: number | undefined, files: number): number | undefined {
  return end === undefined || start === undefined ? undefined : round((end - start) / files, 2);
}

/** Runs one column and adds what the sandbox process spent on it. */
export async function withSandboxCpu<R extends ColumnResult>(
  sandbox: { child: { pid?: number | undefined } },
  files: number,
  run: () => Promise<R>,
): Promise<R> {
  const before = cpuMs(sandbox.child.pid);
  const result = await run();
  return { ...result, sandboxCpuMsPerFile: perFile(cpuMs(sandbox.child.pid), before, files) };
}

type Column = (dir: string) => Promise<ColumnResult>;
type Medians<C extends Record<string, Column>> = { [K in keyof C]: Awaited<ReturnType<C[K]>> };

/**
 * Runs every column `rounds` times, each round in another order (so no column always meets the
 * sandbox right after the same other one), each run in its own folder. Answers each column's
 * median run by files/s, with the files/s of all its runs: single runs here spread by 15 % and more.
 */
export async function inRounds<C extends Record<string, Column>>(
  dir: string,
  rounds: number,
  columns: C,
): Promise<Medians<C>> {
  const names = Object.keys(columns);
  const runs = new Map<string, ColumnResult[]>(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of rotate(names, round)) {
      runs.get(name)!.push(await columns[name]!(path.join(dir, `${name}-${round + 1}`)));
    }
  }
  return Object.fromEntries(
    names.map((name) => {
      const all = runs.get(name)!;
      return [name, { ...medianRun(all, (r) => r.filesPerSecond), runs: all.map((r) => r.filesPerSecond) }];
    }),
  ) as Medians<C>;
}

/** Files of the untimed warm-up burst (or the run's size, when smaller). */
const WARM_UP_FILES = 500;

/**
 * An untimed burst through the keep-alive client before the first column, so every column meets a
 * compiled, warm sandbox, as a long-running service is. Without it the first column (the agent's)
 * paid the sandbox's warm-up: a first ceiling run against a fresh sandbox made 392 files/s at
 * 3.0 ms of sandbox CPU per file, the next one 622 files/s at 2.3 ms. Its files stay until the run
 * ends (support/scratch.ts).
 */
export async function warmUpSandbox(dir: string, info: SandboxInfo, options: BurstOptions): Promise<void> {
  await ceilingColumn(dir, info, { ...options, files: Math.min(WARM_UP_FILES, options.files) });
}

export interface BurstRemoteResult {
  scenario: 'burst-remote';
  files: number;
  concurrency: number;
  /** Added by the sandbox to every create and every PUT. */
  latencyMs: number;
  agent: BurstResult['agent'];
  ceiling: ColumnResult;
  agentVsCeiling: number;
}

/**
 * The burst against a service that is not on loopback: the sandbox answers every create and PUT
 * `latencyMs` later. Agent and ceiling only (the curl script's figure is the loopback burst's).
 */
export async function benchBurstRemote(
  options: BurstOptions & { latencyMs: number },
): Promise<BurstRemoteResult> {
  const dir = scratchDir('docex-bench-remote-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  const control = new SandboxControl(sandbox.info, 1);
  try {
    await control.addFault({ route: '/jobs/single-file', method: 'POST', latencyMs: options.latencyMs });
    await control.addFault({ route: '/upload/:jobId', method: 'PUT', latencyMs: options.latencyMs });
    await warmUpSandbox(path.join(dir, 'warm-up'), sandbox.info, options);
    const { agent, ceiling } = await inRounds(dir, options.rounds ?? 1, {
      agent: (at) => withSandboxCpu(sandbox, options.files, () => agentColumn(at, sandbox.info, options)),
      ceiling: (at) => withSandboxCpu(sandbox, options.files, () => ceilingColumn(at, sandbox.info, options)),
    });
    return {
      scenario: 'burst-remote',
      files: options.files,
      concurrency: options.concurrency,
      latencyMs: options.latencyMs,
      agent,
      ceiling,
      agentVsCeiling: round(agent.filesPerSecond / ceiling.filesPerSecond, 2),
    };
  } finally {
    await control.close();
    await sandbox.stop();
  }
}

export async function benchBurst(options: BurstOptions): Promise<BurstResult> {
  const dir = scratchDir('docex-bench-burst-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    await warmUpSandbox(path.join(dir, 'warm-up'), sandbox.info, options);
    const { agent, ceiling, curl } = await inRounds(dir, options.rounds ?? 1, {
      agent: (at) => withSandboxCpu(sandbox, options.files, () => agentColumn(at, sandbox.info, options)),
      ceiling: (at) => withSandboxCpu(sandbox, options.files, () => ceilingColumn(at, sandbox.info, options)),
      curl: (at) => withSandboxCpu(sandbox, options.files, () => curlColumn(at, sandbox.info, options)),
    });
    const pdfBytes = readFileSync(path.join(dir, 'warm-up', 'bench-000000.pdf')).length;
    return {
      scenario: 'burst',
      files: options.files,
      concurrency: options.concurrency,
      pdfBytes,
      agent,
      curl,
      ceiling,
      agentVsCurl: round(agent.filesPerSecond / curl.filesPerSecond, 2),
      agentVsCeiling: round(agent.filesPerSecond / ceiling.filesPerSecond, 2),
    };
  } finally {
    await sandbox.stop();
  }
}
