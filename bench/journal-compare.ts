/**
 * The journal's two backends side by side (burst-pg, burst-remote-pg, backlog-pg): the same agent
 * build on the same sandbox process, once with journal.sqlite in its state folder and once with a
 * PostgreSQL database on this machine (one server for the bench run, a fresh database per agent
 * run; support/bench-postgres.ts). Each figure as its SQLite counterpart measures it (burst.ts,
 * backlog.ts), plus the PostgreSQL/SQLite ratio and what the server did per file: statements
 * (pg_stat_statements: every round trip, BEGIN and COMMIT included), transactions, the server's
 * own execution time and the CPU of its processes.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { type BacklogOptions, agentColumn as backlogAgent, writeBacklog } from './backlog.js';
import {
  type BurstOptions,
  type BurstResult,
  agentColumn as burstAgent,
  inRounds,
  warmUpSandbox,
  withSandboxCpu,
} from './burst.js';
import type { BenchPostgres, ServerUsage, StatementCount } from './support/bench-postgres.js';
import { startSandboxProcess } from './support/processes.js';
import { SandboxControl } from './support/sandbox-control.js';
import { scratchDir } from './support/scratch.js';
import { round } from './support/stats.js';

/** What the PostgreSQL server did for one agent run, per file the agent uploaded. */
export interface ServerFigures {
  files: number;
  statementsPerFile: number;
  commitsPerFile: number;
  /** Time the server spent executing the agent's statements, ms per file. */
  execMsPerFile: number;
  /** CPU of every server process (backends, WAL writer, checkpointer) over the run, ms per file. */
  cpuMsPerFile: number;
  /** Statements by count per file, most frequent first. */
  top: (StatementCount & { perFile: number })[];
}

function serverFigures(usage: ServerUsage, cpuMs: number, files: number): ServerFigures {
  const per = (n: number, digits = 2) => round(n / Math.max(files, 1), digits);
  // The breakdown on stderr as each run ends (the report keeps the median run's).
  process.stderr.write(
    `bench: PostgreSQL run, ${files} files: ${per(usage.statements)} statements, ${per(usage.commits)} commits per file\n` +
      usage.top
        .slice(0, 30)
        .map((s) => `  ${per(s.calls).toFixed(2).padStart(6)}/file  ${s.query}\n`)
        .join(''),
  );
  return {
    files,
    statementsPerFile: per(usage.statements),
    commitsPerFile: per(usage.commits),
    execMsPerFile: per(usage.execMs, 3),
    cpuMsPerFile: per(cpuMs),
    top: usage.top.map((s) => ({ ...s, perFile: per(s.calls) })),
  };
}

type BurstAgent = BurstResult['agent'];

export interface BurstJournalsResult {
  scenario: 'burst-pg' | 'burst-remote-pg';
  files: number;
  concurrency: number;
  /** burst-remote-pg: the sandbox answers creates and PUTs this much later. */
  latencyMs?: number | undefined;
  /** journal.poolSize of the PostgreSQL runs. */
  poolSize: number;
  sqlite: BurstAgent;
  postgres: BurstAgent & { server?: ServerFigures | undefined };
  /** PostgreSQL files/s over SQLite files/s (target ≥ 0.8). */
  postgresVsSqlite: number;
}

export interface JournalCompareOptions {
  postgres: BenchPostgres;
  poolSize: number;
}

/**
 * The burst (burst.ts), the agent's column only, once per journal per round (order rotated), the
 * median run of each. `latencyMs`: the sandbox answers creates and PUTs that much later (burst-remote).
 */
export async function benchBurstJournals(
  options: BurstOptions & JournalCompareOptions & { latencyMs?: number },
): Promise<BurstJournalsResult> {
  const latencyMs = options.latencyMs ?? 0;
  const remote = latencyMs > 0;
  const dir = scratchDir(remote ? 'docex-bench-remote-pg-' : 'docex-bench-burst-pg-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  const control = new SandboxControl(sandbox.info, 1);
  try {
    if (remote) {
      await control.addFault({ route: '/jobs/single-file', method: 'POST', latencyMs });
      await control.addFault({ route: '/upload/:jobId', method: 'PUT', latencyMs });
    }
    await warmUpSandbox(path.join(dir, 'warm-up'), sandbox.info, options);
    const { sqlite, postgres } = await inRounds(dir, options.rounds ?? 1, {
      sqlite: (at) =>
        withSandboxCpu(sandbox, options.files, () =>
          burstAgent(at, sandbox.info, options, { kind: 'sqlite' }),
        ),
      postgres: async (at) => {
        const url = await options.postgres.createDatabase();
        const cpuBefore = options.postgres.cpuMs();
        let server: ServerFigures | undefined;
        const column = await withSandboxCpu(sandbox, options.files, () =>
          burstAgent(
            at,
            sandbox.info,
            options,
            { kind: 'postgres', url, poolSize: options.poolSize },
            async () => {
              const usage = await options.postgres.usage(url);
              server = serverFigures(usage, options.postgres.cpuMs() - cpuBefore, options.files);
            },
          ),
        );
        return { ...column, server };
      },
    });
    return {
      scenario: remote ? 'burst-remote-pg' : 'burst-pg',
      files: options.files,
      concurrency: options.concurrency,
      ...(remote ? { latencyMs } : {}),
      poolSize: options.poolSize,
      sqlite,
      postgres,
      postgresVsSqlite: round(postgres.filesPerSecond / sqlite.filesPerSecond, 3),
    };
  } finally {
    await control.close();
    await sandbox.stop();
  }
}

type BacklogAgent = Awaited<ReturnType<typeof backlogAgent>>;

export interface BacklogJournalsResult {
  scenario: 'backlog-pg';
  files: number;
  concurrency: number;
  poolSize: number;
  /** Seconds it took to write each backlog (set-up). */
  createSeconds: number;
  /** Which journal ran first (the other met a sandbox that had already served one run). */
  order: ('sqlite' | 'postgres')[];
  sqlite: BacklogAgent;
  postgres: BacklogAgent & { server?: ServerFigures | undefined };
  /** PostgreSQL uploads/s over SQLite's, over the same window (target ≥ 0.8). */
  postgresVsSqlite: number;
}

/**
 * The backlog (backlog.ts) once per journal, each on its own copy of the N files, against one
 * sandbox process; no curl baseline (the backlog scenario has it). PostgreSQL runs first.
 */
export async function benchBacklogJournals(
  options: BacklogOptions & JournalCompareOptions,
): Promise<BacklogJournalsResult> {
  const dir = scratchDir('docex-bench-backlog-pg-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const t = Date.now();
    await writeBacklog(path.join(dir, 'postgres', 'in'), options.files);
    const createSeconds = round((Date.now() - t) / 1000);
    await writeBacklog(path.join(dir, 'sqlite', 'in'), options.files);
    // Both copies on disk before either agent starts, so the first one does not meet the kernel
    // still writing back 2 × N new files (suspected when the PostgreSQL agent, first, took 5.3 s to
    // its first upload in one run and 4.4 s in another, against SQLite's 3.6 and 4.2 s).
    execFileSync('sync');
    const url = await options.postgres.createDatabase();
    const cpuBefore = options.postgres.cpuMs();
    let usage: ServerUsage | undefined;
    let serverCpuMs = 0;
    const postgres = await backlogAgent(
      path.join(dir, 'postgres'),
      sandbox.info,
      options,
      { kind: 'postgres', url, poolSize: options.poolSize },
      async () => {
        usage = await options.postgres.usage(url);
        serverCpuMs = options.postgres.cpuMs() - cpuBefore;
      },
    );
    const sqlite = await backlogAgent(path.join(dir, 'sqlite'), sandbox.info, options, { kind: 'sqlite' });
    return {
      scenario: 'backlog-pg',
      files: options.files,
      concurrency: options.concurrency,
      poolSize: options.poolSize,
      createSeconds,
      order: ['postgres', 'sqlite'],
      sqlite,
      postgres: {
        ...postgres,
        server: usage && serverFigures(usage, serverCpuMs, postgres.uploadedTotal),
      },
      postgresVsSqlite: round(postgres.filesPerSecond / sqlite.filesPerSecond, 3),
    };
  } finally {
    await sandbox.stop();
  }
}
