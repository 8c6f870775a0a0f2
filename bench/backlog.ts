/**
 * Backlog (issue 7, scenario 4): N small PDFs already in the drop folder when the agent starts,
 * under the default stability rule (2 s settle), as after a weekend outage. Measures, from the
 * agent's spawn: its first job created and first upload (from its journal), the start-up's phases
 * up to that job (from the first lines of its log, issue 30), uploads per second over a window
 * that starts at the first upload (or until every file is done), and its peak RSS (VmHWM) read
 * before it stops. Baseline: `ls | xargs curl` (curl-upload.sh) over the same folder, for its own
 * time to first upload and rate, capped at `baselineFiles` files.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { JOURNAL_FILE } from '../src/config/index.js';
import { SEED } from '../src/sandbox/seed-ids.js';
import { type AgentRun, finishAgentRun, waitFinished } from './support/agent-run.js';
import {
  type BenchJournal,
  journalLocation,
  journalSection,
  journalTablesExist,
} from './support/bench-postgres.js';
import {
  peakRssMiB as readPeakRss,
  type SandboxInfo,
  startAgentProcess,
  startSandboxProcess,
} from './support/processes.js';
import { scratchDir } from './support/scratch.js';
import { agentConfigFile, secretFiles } from './support/service.js';
import { round } from './support/stats.js';

export interface BacklogOptions {
  mainJs: string;
  files: number;
  concurrency: number;
  /** Uploads counted over this many seconds from the first upload; 0: until every file is done. */
  windowSeconds: number;
  /** Files the curl baseline uploads (0: no baseline). */
  baselineFiles: number;
  timeoutMs: number;
}

/** The default stability rule's settle time (config/folder-schema.ts), the wait counted apart. */
export const BACKLOG_SETTLE_MS = 2_000;

/**
 * Agent spawn → the first time its log said each step, ms (absent: not said before the first job).
 * The first file's settle wait lies between `listed` and `claimed` (its settle time runs from
 * the scan's stat of it, so part of it may overlap the listing).
 */
export interface BacklogPhases {
  /** Process start, module loading, journal, token, recovery ('recovery planned'). */
  recovered?: number;
  /** The first listing of the drop folder done, every file stat'ed ('folder source started'). */
  listed?: number;
  /** The first file moved into .processing/ once complete by the rule ('file claimed'). */
  claimed?: number;
  /** The first claimed file hashed, inspected and recorded in the journal ('file taken'). */
  taken?: number;
  /** The first job created ('job created'). */
  created?: number;
}

const PHASE_MESSAGES: Record<string, keyof BacklogPhases> = {
  'recovery planned': 'recovered',
  'folder source started': 'listed',
  'file claimed': 'claimed',
  'file taken': 'taken',
  'job created': 'created',
};

/** A log line's phase and when it was said (epoch ms), if it names one not seen yet. */
export function phaseOf(
  line: string,
  seen: BacklogPhases,
): { phase: keyof BacklogPhases; at: number } | undefined {
  // Most lines are not phases: looked at as text before any JSON is parsed.
  const msg = /"msg":"([^"]+)"/.exec(line)?.[1];
  const phase = msg === undefined ? undefined : PHASE_MESSAGES[msg];
  if (phase === undefined || seen[phase] !== undefined) return undefined;
  const time = (JSON.parse(line) as { time?: string | number }).time;
  const at = typeof time === 'number' ? time : Date.parse(time ?? '');
  return Number.isNaN(at) ? undefined : { phase, at };
}

export interface BacklogResult {
  scenario: 'backlog';
  files: number;
  concurrency: number;
  /** Seconds it took to write the backlog (set-up, not measured against anything). */
  createSeconds: number;
  agent: {
    /** Agent spawn → first job created (POST /jobs answered), ms. */
    firstCreatedMs: number;
    /** The same without the settle rule's own wait (firstCreatedMs - settleMs; issue 30: < 3 s). */
    firstCreatedBeyondSettleMs?: number;
    /** The settle rule's wait counted apart, ms. */
    settleMs?: number;
    /** Agent spawn → each step of its start-up up to the first job (from its log). */
    phases?: BacklogPhases;
    /** Agent spawn → first upload finished, ms. */
    firstUploadedMs: number;
    /** The window the rate is taken over, s (the whole run when the backlog was drained). */
    windowSeconds: number;
    uploadedInWindow: number;
    filesPerSecond: number;
    /** Every file archived before the agent was stopped. */
    drained: boolean;
    /** VmHWM when the first file was archived: start-up and the folder scan. */
    peakRssAtFirstUploadMiB: number | undefined;
    peakRssMiB: number | undefined;
    /** Files uploaded before the agent was stopped (the window's and those after it). */
    uploadedTotal?: number;
  };
  baseline?:
    | {
        column: string;
        files: number;
        firstUploadedMs: number;
        filesPerSecond: number;
      }
    | undefined;
  /** Baseline time to first upload / the agent's (above 1: the agent submits sooner). */
  firstUploadVsBaseline?: number | undefined;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** N distinct small PDFs (a trailing comment per file: the agent refuses duplicates). */
export async function writeBacklog(dir: string, files: number): Promise<void> {
  const doc = await PDFDocument.create();
  doc.addPage([595, 842]);
  const base = Buffer.from(await doc.save());
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < files; i++) {
    const name = `backlog-${String(i).padStart(6, '0')}.pdf`;
    writeFileSync(path.join(dir, name), Buffer.concat([base, Buffer.from(`% backlog file ${i}\n`)]));
  }
}

function writeAgentConfig(
  dir: string,
  info: SandboxInfo,
  concurrency: number,
  journal: BenchJournal | undefined,
): string {
  const configFile = agentConfigFile(dir, info, {
    ...journalSection(journal),
    concurrency,
    // Info: the start-up's phases are read from the first lines (about six lines a file follow).
    log: { level: 'info' },
    ops: { listen: '127.0.0.1:0' },
    // Only the intake is measured.
    returns: { enabled: false },
    peppolInbox: { enabled: false },
    folders: [
      {
        name: 'backlog',
        source: { type: 'local', path: './in' },
        workflowId: SEED.workflows.pdfEmail,
        archiveDir: './archive',
        errorDir: './error',
        concurrency,
        // stability: the default rule (settle), as a user gets it.
      },
    ],
  });
  return configFile;
}

/** `ls <dir> | head -n K | curl-upload.sh`: answers each upload's end (epoch ms). */
async function baselineColumn(
  dir: string,
  info: SandboxInfo,
  options: BacklogOptions,
): Promise<NonNullable<BacklogResult['baseline']>> {
  const secrets = secretFiles(info);
  const startedAt = Date.now();
  const child = spawn('bash', ['-c', 'ls "$DIR" | head -n "$K" | sed "s|^|$DIR/|" | bash "$SCRIPT"'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DIR: path.join(dir, 'in'),
      K: String(options.baselineFiles),
      SCRIPT: path.join(here, 'curl-upload.sh'),
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
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const doneAt = out
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.split(' ')[1]));
  if (code !== 0 || doneAt.length !== options.baselineFiles) {
    throw new Error(`backlog baseline: exit ${code}, ${doneAt.length} of ${options.baselineFiles} uploaded`);
  }
  const first = Math.min(...doneAt);
  const last = Math.max(...doneAt);
  return {
    column: 'ls | xargs curl (curl-upload.sh)',
    files: doneAt.length,
    firstUploadedMs: first - startedAt,
    filesPerSecond: round(doneAt.length / ((last - startedAt) / 1000)),
  };
}

/**
 * The agent on the backlog in `dir/in`. `journal`: SQLite (default) or a PostgreSQL database;
 * `afterStop`: see finishAgentRun.
 */
export async function agentColumn(
  dir: string,
  info: SandboxInfo,
  options: BacklogOptions,
  journal?: BenchJournal,
  afterStop?: () => Promise<void>,
): Promise<BacklogResult['agent'] & { uploadedTotal: number }> {
  const configFile = writeAgentConfig(dir, info, options.concurrency, journal);
  const journalFile = path.join(dir, 'state', JOURNAL_FILE);
  const spawnedAt = Date.now();
  const said: BacklogPhases = {};
  const child = await startAgentProcess(
    options.mainJs,
    configFile,
    journal?.kind === 'postgres' ? journalTablesExist(journal.url) : journalFile,
    (line) => {
      const found = phaseOf(line, said);
      if (found) said[found.phase] = found.at - spawnedAt;
      return said.created === undefined;
    },
  );
  const run: AgentRun = {
    inbox: path.join(dir, 'in'),
    staging: dir,
    child,
    journal: journalLocation(journal, journalFile),
    archiveDir: path.join(dir, 'archive'),
    errorDir: path.join(dir, 'error'),
  };
  try {
    const first = await waitFinished(run, 1, options.timeoutMs, 100);
    const atFirst = readPeakRss(child.pid);
    let drained = options.windowSeconds <= 0;
    if (drained) await waitFinished(run, options.files, options.timeoutMs, 1000);
    else {
      await new Promise((r) => setTimeout(r, options.windowSeconds * 1000 - (Date.now() - first.at)));
      drained = (await waitFinished(run, 0, 0)).archived >= options.files;
    }
    const { peakRssMiB, times } = await finishAgentRun(run, afterStop);
    const created = [...times.values()].flatMap((t) => (t.created === undefined ? [] : [t.created]));
    const uploaded = [...times.values()].flatMap((t) => (t.uploaded === undefined ? [] : [t.uploaded]));
    if (uploaded.length === 0) throw new Error('backlog: the agent uploaded nothing');
    const firstUploaded = Math.min(...uploaded);
    const windowSeconds = drained ? (Math.max(...uploaded) - firstUploaded) / 1000 : options.windowSeconds;
    const inWindow = uploaded.filter((t) => t - firstUploaded <= windowSeconds * 1000).length;
    const firstCreatedMs = Math.min(...created) - spawnedAt;
    return {
      firstCreatedMs,
      firstCreatedBeyondSettleMs: firstCreatedMs - BACKLOG_SETTLE_MS,
      settleMs: BACKLOG_SETTLE_MS,
      phases: said,
      firstUploadedMs: firstUploaded - spawnedAt,
      windowSeconds: round(windowSeconds, 1),
      uploadedInWindow: inWindow,
      filesPerSecond: round(inWindow / Math.max(windowSeconds, 0.001)),
      drained,
      peakRssAtFirstUploadMiB: atFirst && round(atFirst),
      peakRssMiB: peakRssMiB && round(peakRssMiB),
      uploadedTotal: uploaded.length,
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

export async function benchBacklog(options: BacklogOptions): Promise<BacklogResult> {
  const dir = scratchDir('docex-bench-backlog-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const agentDir = path.join(dir, 'agent');
    const t = Date.now();
    await writeBacklog(path.join(agentDir, 'in'), options.files);
    const createSeconds = round((Date.now() - t) / 1000);
    // The script first: it reads the folder and leaves the files where they are.
    const baseline =
      options.baselineFiles > 0
        ? await baselineColumn(agentDir, sandbox.info, {
            ...options,
            baselineFiles: Math.min(options.baselineFiles, options.files),
          })
        : undefined;
    const agent = await agentColumn(agentDir, sandbox.info, options);
    return {
      scenario: 'backlog',
      files: options.files,
      concurrency: options.concurrency,
      createSeconds,
      agent,
      baseline,
      firstUploadVsBaseline: baseline && round(baseline.firstUploadedMs / agent.firstUploadedMs, 2),
    };
  } finally {
    await sandbox.stop();
  }
}
