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
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { freePort } from '../../test/support/free-port.js';
import { cpuMs, peakRssMiB, type SandboxInfo, startAgentProcess, stopChild, waitReady } from './processes.js';

export interface AgentRun {
  inbox: string;
  staging: string;
  child: ChildProcess;
  journalFile: string;
  archiveDir: string;
  errorDir: string;
}

export async function startAgentRun(
  dir: string,
  info: SandboxInfo,
  options: { mainJs: string; concurrency: number; maxFileBytes?: number },
): Promise<AgentRun> {
  const fragment = parse(readFileSync(info.paths.agentConfigFragment, 'utf8')) as object;
  const inbox = path.join(dir, 'in');
  const staging = path.join(dir, 'staging');
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
      log: { level: 'warn' },
      ops: { listen: `127.0.0.1:${opsPort}` },
      folders: [
        {
          name: 'bench',
          source: { type: 'local', path: './in' },
          workflowId: SEED.workflows.pdfEmail,
          archiveDir: './archive',
          errorDir: './error',
          // The producer renames each complete file in: no settle wait (the other columns have none).
          stability: { kind: 'rename-in' },
          concurrency: options.concurrency,
        },
      ],
    }),
  );
  const journalFile = path.join(dir, 'state', JOURNAL_FILE);
  const child = await startAgentProcess(options.mainJs, configFile, journalFile);
  await waitReady(child, opsPort);
  return {
    inbox,
    staging,
    child,
    journalFile,
    archiveDir: path.join(dir, 'archive'),
    errorDir: path.join(dir, 'error'),
  };
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

export interface FileTimes {
  created?: number | undefined;
  uploaded?: number | undefined;
}

/** Stops the agent (peak RSS read first) and answers, per file name, when its job was created and uploaded. */
export async function finishAgentRun(
  run: AgentRun,
): Promise<{ peakRssMiB: number | undefined; cpuMs: number | undefined; times: Map<string, FileTimes> }> {
  const peak = peakRssMiB(run.child.pid);
  const cpu = cpuMs(run.child.pid);
  await stopChild(run.child);
  const journal = SqliteJournal.open(run.journalFile, { clock: systemClock, log: silentLogger() });
  try {
    const times = new Map<string, FileTimes>();
    for (const item of await journal.recent(1_000_000)) {
      const history = await journal.history(item.id);
      const at = (state: string) => history.find((h) => h.to === state)?.at;
      times.set(item.fileName, { created: at('created'), uploaded: at('uploaded') });
    }
    return { peakRssMiB: peak, cpuMs: cpu, times };
  } finally {
    await journal.close();
  }
}
