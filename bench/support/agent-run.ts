/**
 * One agent process on one drop folder of a sandbox process: write its config, start it and wait
 * until it is ready, drop files (staged next to the folder, renamed in), wait until every file is archived or refused,
 * stop it, and read each file's drop→uploaded time from its journal.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { JOURNAL_FILE } from '../../src/config/index.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { JournalLocation } from '../../src/journal/location.js';
import { openJournal } from '../../src/journal/open.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { freePort } from '../../test/support/free-port.js';
import { type BenchJournal, journalLocation, journalSection, journalTablesExist } from './bench-postgres.js';
import { cpuMs, peakRssMiB, type SandboxInfo, startAgentProcess, stopChild, waitReady } from './processes.js';

export interface AgentRun {
  inbox: string;
  staging: string;
  child: ChildProcess;
  /** Where its journal is: the SQLite file in its state folder, or a PostgreSQL database. */
  journal: JournalLocation;
  archiveDir: string;
  errorDir: string;
  /** Its ops endpoints (/metrics) on 127.0.0.1, when startAgentRun started it. */
  opsPort?: number;
}

export interface AgentRunOptions {
  mainJs: string;
  concurrency: number;
  maxFileBytes?: number;
  journal?: BenchJournal;
  /** Several agents on one journal: the `cluster` section (leases). */
  cluster?: Record<string, unknown>;
  /** A second agent on the folders of this run (its drop, archive and error folders). */
  sharing?: AgentRun;
  /** More top-level sections of the agent's configuration (`pace`, `returns`). */
  extra?: Record<string, unknown>;
}

export async function startAgentRun(
  dir: string,
  info: SandboxInfo,
  options: AgentRunOptions,
): Promise<AgentRun> {
  const fragment = parse(readFileSync(info.paths.agentConfigFragment, 'utf8')) as object;
  const shared = options.sharing;
  const inbox = shared?.inbox ?? path.join(dir, 'in');
  const staging = shared?.staging ?? path.join(dir, 'staging');
  const archiveDir = shared?.archiveDir ?? path.join(dir, 'archive');
  const errorDir = shared?.errorDir ?? path.join(dir, 'error');
  mkdirSync(dir, { recursive: true });
  mkdirSync(inbox, { recursive: true });
  mkdirSync(staging, { recursive: true });
  const configFile = path.join(dir, 'agent.yaml');
  // Polled for readiness; a free port, since the bench may run beside another agent.
  const opsPort = await freePort();
  writeFileSync(
    configFile,
    stringify({
      ...fragment,
      stateDir: './state',
      concurrency: options.concurrency,
      ...(options.maxFileBytes ? { maxFileBytes: options.maxFileBytes } : {}),
      ...journalSection(options.journal),
      ...(options.cluster ? { cluster: options.cluster } : {}),
      ...options.extra,
      // BENCH_AGENT_LOG_LEVEL=info with BENCH_AGENT_STDOUT: every file's lines, to follow a failed run.
      log: { level: process.env['BENCH_AGENT_LOG_LEVEL'] ?? 'warn' },
      ops: { listen: `127.0.0.1:${opsPort}` },
      folders: [
        {
          name: 'bench',
          source: { type: 'local', path: inbox },
          workflowId: SEED.workflows.pdfEmail,
          archiveDir,
          errorDir,
          // The producer renames each complete file in: no settle wait (the other columns have none).
          stability: { kind: 'rename-in' },
          concurrency: options.concurrency,
        },
      ],
    }),
  );
  const journalFile = path.join(dir, 'state', JOURNAL_FILE);
  const journal = options.journal;
  const child = await startAgentProcess(
    options.mainJs,
    configFile,
    journal?.kind === 'postgres' ? journalTablesExist(journal.url) : journalFile,
  );
  await waitReady(child, opsPort);
  return {
    inbox,
    staging,
    child,
    journal: journalLocation(journal, journalFile),
    archiveDir,
    errorDir,
    opsPort,
  };
}

/** The agent's docex_cluster_tasks_total, by task: claims it ran and claims it left to another agent. */
export async function clusterTaskClaims(run: AgentRun): Promise<Map<string, { ran: number; left: number }>> {
  if (run.opsPort === undefined) throw new Error('clusterTaskClaims: the run has no ops port');
  const text = await (await fetch(`http://127.0.0.1:${run.opsPort}/metrics`)).text();
  const claims = new Map<string, { ran: number; left: number }>();
  for (const line of text.split('\n')) {
    const m = /^docex_cluster_tasks_total\{task="([^"]+)",outcome="(ran|left)"\} (\d+)$/.exec(line);
    if (!m) continue;
    const tally = claims.get(m[1]!) ?? { ran: 0, left: 0 };
    tally[m[2] as 'ran' | 'left'] += Number(m[3]);
    claims.set(m[1]!, tally);
  }
  return claims;
}

/** Renames every staged file into the drop folder; answers each name's drop time (epoch ms). */
export function dropAll(run: AgentRun, names: readonly string[]): Map<string, number> {
  const dropped = new Map<string, number>();
  for (const name of names) {
    renameSync(path.join(run.staging, name), path.join(run.inbox, name));
    dropped.set(name, Date.now());
  }
  return dropped;
}

function countFinished(run: AgentRun): { archived: number; refused: number } {
  let archived = 0;
  if (existsSync(run.archiveDir)) {
    for (const day of readdirSync(run.archiveDir)) {
      archived += readdirSync(path.join(run.archiveDir, day)).filter((n) => n.endsWith('.pdf')).length;
    }
  }
  const refused = existsSync(run.errorDir)
    ? readdirSync(run.errorDir).filter((n) => n.endsWith('.pdf')).length
    : 0;
  return { archived, refused };
}

/** Polls the archive and error folders until `count` files are in them (or the time is up). */
export async function waitFinished(
  run: AgentRun,
  count: number,
  timeoutMs: number,
  // The measured times come from the journal, so a slow poll costs no precision, only CPU taken from the agent.
  pollMs = 250,
): Promise<{ archived: number; refused: number; at: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = countFinished(run);
    if (n.archived + n.refused >= count) return { ...n, at: Date.now() };
    if (Date.now() > deadline) {
      throw new Error(`agent finished ${n.archived + n.refused} of ${count} files in ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** When a file reached each state of its journal history (epoch ms), the first time. */
export interface FileTimes {
  claimed?: number | undefined;
  validated?: number | undefined;
  creating?: number | undefined;
  created?: number | undefined;
  uploaded?: number | undefined;
  done?: number | undefined;
}

/**
 * Stops the agent (peak RSS read first) and answers, per file name, when it reached each state
 * (claimed … done). `afterStop` runs once the agent is gone and before the journal is read (a PostgreSQL
 * server's statistics, which the reading would add to).
 */
export async function finishAgentRun(
  run: AgentRun,
  afterStop?: () => Promise<void>,
): Promise<{ peakRssMiB: number | undefined; cpuMs: number | undefined; times: Map<string, FileTimes> }> {
  const peak = peakRssMiB(run.child.pid);
  const cpu = cpuMs(run.child.pid);
  await stopChild(run.child);
  await afterStop?.();
  const journal = await openJournal(run.journal, { clock: systemClock, log: silentLogger() });
  try {
    const times = new Map<string, FileTimes>();
    const items = await journal.recent(1_000_000);
    // One history read per file: over a network connection, several at once.
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const history = await journal.history(item.id);
        const at = (state: string) => history.find((h) => h.to === state)?.at;
        times.set(item.fileName, {
          claimed: at('claimed'),
          validated: at('validated'),
          creating: at('creating'),
          created: at('created'),
          uploaded: at('uploaded'),
          done: at('done'),
        });
      }
    };
    await Promise.all(Array.from({ length: run.journal.kind === 'postgres' ? 4 : 1 }, worker));
    return { peakRssMiB: peak, cpuMs: cpu, times };
  } finally {
    await journal.close();
  }
}
