/**
 * Return path (issue 7, scenario 5): N sending events followed to their end and their proofs
 * archived, and M incoming Peppol documents saved, each by the agent in its own process.
 *
 * Set-up (not measured): the agent submits one CSV of N rows to the DATA_FILE workflow (the
 * sandbox makes one sending event per row), the sandbox clock is moved until every event is final
 * with its two proof PDFs, and M UBL invoices are posted to /_sandbox/peppol-documents. Then the
 * agent starts again twice on the same state: once with only `returns` on (measured: start → every
 * proof file in the proofs folder), once with only `peppolInbox` on (start → every .json summary
 * in the inbox). Baseline: curl-returns.sh (list with curl + jq, then per document a URL request
 * and a download, $P at a time), capped at `baselineDocs` documents.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JOURNAL_FILE } from '../src/config/index.js';
import { RETURNS_FILE } from '../src/returns/store.js';
import { SEED } from '../src/sandbox/seed-ids.js';
import { countFiles } from './support/count-files.js';
import {
  peakRssMiB,
  type SandboxInfo,
  startAgentProcess,
  startSandboxProcess,
  stopChild,
} from './support/processes.js';
import { SandboxControl } from './support/sandbox-control.js';
import { scratchDir } from './support/scratch.js';
import { agentConfigFile, secretFiles } from './support/service.js';
import { pool, round } from './support/stats.js';

export interface ReturnPathOptions {
  mainJs: string;
  events: number;
  peppolDocs: number;
  /** -P of the curl script and of the set-up's calls (the agent's follower paces itself). */
  concurrency: number;
  /** Documents each curl baseline fetches (0: no baseline). */
  baselineDocs: number;
  /**
   * Also run the proofs again, on the same prepared events, with the follow settings this bench
   * used before issue 18 (every-second schedule, no call budget, concurrency 8): an A/B under the
   * same load.
   */
  compareTuned?: boolean;
  timeoutMs: number;
}

export interface StreamResult {
  documents: number;
  /** Agent spawn → the last document in its folder, s. */
  seconds: number;
  documentsPerSecond: number;
  peakRssMiB: number | undefined;
}

export interface BaselineResult {
  column: string;
  documents: number;
  seconds: number;
  documentsPerSecond: number;
}

export interface ReturnPathResult {
  scenario: 'return-path';
  events: number;
  concurrency: number;
  /** The agent's follow settings: its defaults (since issue 18); absent in older reports (tuned, c=concurrency). */
  follow?: 'defaults';
  setup: { intakeSeconds: number; finalizeSeconds: number; peppolSeedSeconds: number };
  proofs: StreamResult & { baseline?: BaselineResult | undefined; vsBaseline?: number | undefined };
  /** The same proofs with the settings tuned before issue 18 (compareTuned). */
  proofsTuned?: StreamResult | undefined;
  peppol: StreamResult & { baseline?: BaselineResult | undefined; vsBaseline?: number | undefined };
  /** SIGTERM to the sandbox process → its exit, after every pass (absent in older reports). */
  sandboxStopSeconds?: number;
}

/** The return path at several sizes, one after another, each on a sandbox of its own (issue 30). */
export interface ReturnPathFlatResult {
  scenario: 'return-path-flat';
  /** Smallest number of events first. */
  runs: ReturnPathResult[];
  /** Peak RSS of the proofs pass at the largest size over that at the smallest. */
  peakRatio: number | undefined;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = (since: number) => round((Date.now() - since) / 1000, 2);

type Phase = 'intake' | 'proofs' | 'proofs-tuned' | 'peppol';

/** The follow settings this bench used before the follower paced itself (issue 18). */
const TUNED_FOLLOW = {
  schedule: '* * * * * *',
  firstPollMs: 0,
  maxCallsPerMinute: 100_000,
  concurrency: 8,
};

function writeConfig(dir: string, info: SandboxInfo, phase: Phase): string {
  const file = agentConfigFile(
    dir,
    info,
    {
      log: { level: 'warn' },
      ops: { listen: '127.0.0.1:0' },
      returns: {
        enabled: phase === 'proofs' || phase === 'proofs-tuned',
        // The follower as installed: its default pacing (issue 18), nothing tuned.
        ...(phase === 'proofs-tuned' ? { follow: TUNED_FOLLOW } : {}),
        statuses: { target: { type: 'local', path: './out/statuses' } },
        proofs: { target: { type: 'local', path: './out/proofs' } },
      },
      peppolInbox: { enabled: phase === 'peppol', target: { type: 'local', path: './out/peppol-inbox' } },
      folders: [
        {
          name: 'events',
          source: { type: 'local', path: './in' },
          workflowId: SEED.workflows.dataFile,
          archiveDir: './archive',
          errorDir: './error',
          stability: { kind: 'rename-in' },
        },
      ],
    },
    `agent-${phase}.yaml`,
  );
  return file;
}

async function until(
  what: string,
  timeoutMs: number,
  pollMs: number,
  done: () => Promise<boolean> | boolean,
) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await done()) return;
    } catch (err) {
      // The sandbox may not answer while it turns 10,000 rows into events (a full run once hit a
      // 10 s connect timeout there): busy is not broken, so ask again until the deadline.
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`return path: ${what} not reached in ${timeoutMs} ms`, { cause: lastError });
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** The agent submits one CSV of `events` rows; answers once the sandbox holds every event, final. */
async function intake(dir: string, info: SandboxInfo, control: SandboxControl, options: ReturnPathOptions) {
  const journalFile = path.join(dir, 'state', JOURNAL_FILE);
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  const child = await startAgentProcess(options.mainJs, writeConfig(dir, info, 'intake'), journalFile);
  const run = { archiveDir: path.join(dir, 'archive'), errorDir: path.join(dir, 'error') };
  try {
    const rows = Array.from(
      { length: options.events },
      (_, i) => `Recipient ${i},recipient-${i}@example.com`,
    );
    writeFileSync(path.join(dir, 'events.csv'), `name,email\r\n${rows.join('\r\n')}\r\n`);
    renameSync(path.join(dir, 'events.csv'), path.join(dir, 'in', 'events.csv'));
    // waitFinished counts PDFs only: look for the CSV itself.
    await until(
      'the CSV archived',
      options.timeoutMs,
      100,
      () => countFiles(run.archiveDir, '.csv') + countFiles(run.errorDir, '.csv') > 0,
    );
    if (countFiles(run.archiveDir, '.csv') !== 1) throw new Error('return path: the agent refused the CSV');
  } finally {
    await stopChild(child);
  }
  await until('every sending event created', options.timeoutMs, 200, async () => {
    const state = await control.state();
    return (state.counts['sending-event'] ?? 0) >= options.events;
  });
  const job = (await control.jobs()).find((j) => j.workflowId === SEED.workflows.dataFile);
  if (!job) throw new Error('return path: the sandbox holds no job of the CSV');
  return job.id;
}

/** Moves the sandbox clock until every event is final (the sandbox renders the proof PDFs). */
async function finalizeAll(control: SandboxControl, options: ReturnPathOptions): Promise<void> {
  await control.advanceClock(60_000);
  await until('every sending event final', options.timeoutMs, 200, async () => {
    const state = await control.state();
    return state.sendingEvents.active === 0;
  });
  const state = await control.state();
  if ((state.sendingEvents.byBusinessStatus['SUCCESS'] ?? 0) !== options.events) {
    throw new Error(`return path: outcomes ${JSON.stringify(state.sendingEvents.byBusinessStatus)}`);
  }
}

function peppolXml(template: string, i: number): string {
  return template.replace(/<cbc:ID>[^<]*<\/cbc:ID>/, `<cbc:ID>BENCH-${String(i).padStart(6, '0')}</cbc:ID>`);
}

async function seedPeppol(control: SandboxControl, count: number, concurrency: number): Promise<number> {
  const template = readFileSync(
    path.join(here, '..', 'src', 'sandbox', 'seed-data', 'peppol', 'base-example.xml'),
    'utf8',
  );
  const indexes = Array.from({ length: count }, (_, i) => i);
  await pool(indexes, concurrency, (i) => control.addPeppolDocument(peppolXml(template, i)));
  return (await control.state()).counts['peppol-document'] ?? 0;
}

/** Starts the agent on the prepared state with one part on; answers when `count` files are out. */
async function agentStream(
  dir: string,
  info: SandboxInfo,
  phase: 'proofs' | 'proofs-tuned' | 'peppol',
  expected: number,
  options: ReturnPathOptions,
): Promise<StreamResult> {
  const outDir = path.join(dir, 'out', phase === 'peppol' ? 'peppol-inbox' : 'proofs');
  const suffix = phase === 'peppol' ? '.json' : '.pdf';
  const config = writeConfig(dir, info, phase);
  const spawnedAt = Date.now();
  const child = await startAgentProcess(options.mainJs, config, path.join(dir, 'state', JOURNAL_FILE));
  try {
    let doneAt = 0;
    // Walking 20,000 names costs CPU the agent shares: a coarser poll for big runs.
    const pollMs = expected > 2000 ? 500 : 100;
    await until(`${expected} ${phase} files`, options.timeoutMs, pollMs, () => {
      doneAt = Date.now();
      return countFiles(outDir, suffix) >= expected;
    });
    const peak = peakRssMiB(child.pid);
    const s = (doneAt - spawnedAt) / 1000;
    return {
      documents: expected,
      seconds: round(s, 2),
      documentsPerSecond: round(expected / s),
      peakRssMiB: peak && round(peak),
    };
  } finally {
    await stopChild(child);
  }
}

async function curlBaseline(
  dir: string,
  info: SandboxInfo,
  mode: 'proofs' | 'peppol',
  jobId: string,
  limit: number,
  options: ReturnPathOptions,
): Promise<BaselineResult> {
  const work = path.join(dir, `curl-${mode}`);
  const out = path.join(work, 'out');
  mkdirSync(out, { recursive: true });
  const secrets = secretFiles(info);
  const startedAt = Date.now();
  const child = spawn('bash', [path.join(here, 'curl-returns.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      MODE: mode,
      JOB: jobId,
      CA: info.paths.caCert,
      CERT: info.paths.clientCert,
      KEY: info.paths.clientKey,
      API: info.urls.api,
      AUTH: info.urls.auth,
      CLIENT_ID: info.clientId,
      SECRET_FILE: secrets.clientSecretFile,
      APIKEY_FILE: secrets.apiKeyFile,
      WORK: work,
      OUT: out,
      P: String(options.concurrency),
      LIMIT: String(limit),
    },
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  const doneAt = text
    .split('\n')
    .filter(Boolean)
    .map((line) => Number(line.split(' ')[1]));
  if (code !== 0 || doneAt.length !== limit) {
    throw new Error(`curl ${mode} baseline: exit ${code}, ${doneAt.length} of ${limit} documents`);
  }
  const s = (Math.max(...doneAt) - startedAt) / 1000;
  return {
    column: `bash + curl + jq per document, -P ${options.concurrency}`,
    documents: doneAt.length,
    seconds: round(s, 2),
    documentsPerSecond: round(doneAt.length / s),
  };
}

export async function benchReturnPath(options: ReturnPathOptions): Promise<ReturnPathResult> {
  const dir = scratchDir('docex-bench-returns-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  const control = new SandboxControl(sandbox.info, options.concurrency);
  let stopped = false;
  try {
    const agentDir = path.join(dir, 'agent');
    let t = Date.now();
    const step = (what: string) => process.stderr.write(`bench: return path: ${what}\n`);
    step('intake');
    const jobId = await intake(agentDir, sandbox.info, control, options);
    const intakeSeconds = seconds(t);
    t = Date.now();
    step('finalize');
    await finalizeAll(control, options);
    const finalizeSeconds = seconds(t);
    t = Date.now();
    step('peppol seed');
    const peppolTotal = await seedPeppol(control, options.peppolDocs, options.concurrency);
    const peppolSeedSeconds = seconds(t);
    process.stderr.write(
      `bench: return path set up: ${options.events} events final in ${intakeSeconds + finalizeSeconds} s, ` +
        `${peppolTotal} Peppol documents in ${peppolSeedSeconds} s\n`,
    );

    const proofDocs = options.events * 2; // a SUCCESS event carries a delivery proof and a submission report
    step('proofs');
    const proofs = await agentStream(agentDir, sandbox.info, 'proofs', proofDocs, options);
    let proofsTuned: StreamResult | undefined;
    if (options.compareTuned) {
      step('proofs again, tuned settings');
      // The same events from the start: no follow state, no proof written.
      for (const done of [RETURNS_FILE, `${RETURNS_FILE}-wal`, `${RETURNS_FILE}-shm`])
        rmSync(path.join(agentDir, 'state', done), { force: true });
      rmSync(path.join(agentDir, 'out', 'proofs'), { recursive: true, force: true });
      proofsTuned = await agentStream(agentDir, sandbox.info, 'proofs-tuned', proofDocs, options);
    }
    step('peppol');
    const peppol = await agentStream(agentDir, sandbox.info, 'peppol', peppolTotal, options);
    step('baselines');
    const cap = (n: number) => Math.min(options.baselineDocs, n);
    const proofsBaseline =
      options.baselineDocs > 0
        ? await curlBaseline(dir, sandbox.info, 'proofs', jobId, cap(proofDocs), options)
        : undefined;
    const peppolBaseline =
      options.baselineDocs > 0
        ? await curlBaseline(dir, sandbox.info, 'peppol', jobId, cap(peppolTotal), options)
        : undefined;
    const ratio = (agent: StreamResult, base: BaselineResult | undefined) =>
      base && round(agent.documentsPerSecond / base.documentsPerSecond, 2);
    // Timed: a sandbox busy with a night's proofs once ignored SIGTERM until the bench killed it.
    step('sandbox stop');
    t = Date.now();
    await control.close();
    await sandbox.stop();
    stopped = true;
    const sandboxStopSeconds = seconds(t);
    step(`sandbox stopped on SIGTERM in ${sandboxStopSeconds} s`);
    return {
      scenario: 'return-path',
      events: options.events,
      concurrency: options.concurrency,
      follow: 'defaults',
      setup: { intakeSeconds, finalizeSeconds, peppolSeedSeconds },
      proofs: { ...proofs, baseline: proofsBaseline, vsBaseline: ratio(proofs, proofsBaseline) },
      ...(proofsTuned ? { proofsTuned } : {}),
      peppol: { ...peppol, baseline: peppolBaseline, vsBaseline: ratio(peppol, peppolBaseline) },
      sandboxStopSeconds,
    };
  } finally {
    if (!stopped) {
      await control.close();
      await sandbox.stop();
    }
  }
}

/**
 * The return path once per size (smallest first), each from a fresh sandbox and agent state:
 * whether the agent's memory stays flat as the night grows.
 */
export async function benchReturnPathFlat(
  sizes: readonly number[],
  options: Omit<ReturnPathOptions, 'events'>,
): Promise<ReturnPathFlatResult> {
  const runs: ReturnPathResult[] = [];
  for (const events of [...sizes].sort((a, b) => a - b)) {
    process.stderr.write(`bench: return path flat: ${events} sending events\n`);
    runs.push(await benchReturnPath({ ...options, events }));
  }
  const smallest = runs[0]?.proofs.peakRssMiB;
  const largest = runs.at(-1)?.proofs.peakRssMiB;
  return {
    scenario: 'return-path-flat',
    runs,
    peakRatio: smallest && largest ? round(largest / smallest, 3) : undefined,
  };
}
