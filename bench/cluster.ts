/**
 * Several agents on one PostgreSQL journal (`--only cluster`), with the service `latencyMs` away
 * (the burst-remote set-up: the sandbox answers every create and PUT that much later):
 * - throughput: the burst taken by one agent, then by two agent processes watching the same drop
 *   folder (each with its own state folder, the same database), in rounds, the median run of each;
 * - failover: two agents on a burst with leases of `leaseMs`; once the first agent holds files, it
 *   is SIGKILLed; the time from the kill to the first of its files held by the other agent
 *   (polled in the database every 20 ms), against the lease.
 * - the tasks run once across the agents: during each two-agent burst, both agents' claims of them
 *   (docex_cluster_tasks_total, read from their /metrics before they stop), summed: each firing of
 *   a task is ran by one agent and left by the other.
 */
import path from 'node:path';
import { writePdfs } from './burst.js';
import {
  clusterTaskClaims,
  dropAll,
  finishAgentRun,
  startAgentRun,
  waitFinished,
} from './support/agent-run.js';
import { type BenchPostgres, withClient } from './support/bench-postgres.js';
import { startSandboxProcess, stopChild } from './support/processes.js';
import { SandboxControl } from './support/sandbox-control.js';
import { scratchDir } from './support/scratch.js';
import { medianRun, round } from './support/stats.js';

export interface ClusterOptions {
  mainJs: string;
  files: number;
  concurrency: number;
  timeoutMs: number;
  rounds: number;
  latencyMs: number;
  postgres: BenchPostgres;
  poolSize: number;
  /** cluster.leaseMs of the failover run (renewMs a third of it, createMarginMs a quarter). */
  leaseMs: number;
}

export interface ClusterThroughput {
  filesPerSecond: number;
  seconds: number;
  runs: number[];
}

/** Claims of the tasks run once across the agents, summed over the agents of one run. */
export interface TaskClaims {
  /** From the start of the first agent to the reading. */
  overSeconds: number;
  tasks: Record<string, { ran: number; left: number }>;
}

export interface ClusterResult {
  scenario: 'cluster';
  files: number;
  /** Per agent. */
  concurrency: number;
  latencyMs: number;
  poolSize: number;
  one: ClusterThroughput;
  two: ClusterThroughput;
  /** Two agents' files/s over one agent's (target ≥ 1.8). */
  twoVsOne: number;
  /** The task claims of every two-agent run, summed. */
  twoTasks: TaskClaims;
  failover: {
    leaseMs: number;
    renewMs: number;
    /** Files the killed agent held at the kill. */
    held: number;
    /** SIGKILL → first of its files held by the other agent. */
    ms: number;
    /** ms / leaseMs (target < 1.5). */
    vsLease: number;
    /** Every file archived once after the failover. */
    archived: number;
  };
}

function addClaims(into: TaskClaims['tasks'], task: string, claims: { ran: number; left: number }): void {
  const sum = into[task] ?? { ran: 0, left: 0 };
  into[task] = { ran: sum.ran + claims.ran, left: sum.left + claims.left };
}

const clusterSection = (leaseMs: number) => ({
  leaseMs,
  renewMs: Math.floor(leaseMs / 3),
  createMarginMs: Math.floor(leaseMs / 4),
  heartbeatMs: Math.max(1_000, Math.floor(leaseMs / 3)),
  deadAfterMs: leaseMs,
});

/** One burst through `agents` agent processes on one drop folder and one fresh database. */
async function burstThrough(
  dir: string,
  options: ClusterOptions,
  info: Parameters<typeof startAgentRun>[1],
  agents: number,
): Promise<{ filesPerSecond: number; seconds: number; tasks: TaskClaims }> {
  const journal = {
    kind: 'postgres' as const,
    url: await options.postgres.createDatabase(),
    poolSize: options.poolSize,
  };
  const common = { mainJs: options.mainJs, concurrency: options.concurrency, journal };
  const firstStarted = Date.now();
  const first = await startAgentRun(path.join(dir, 'a'), info, common);
  const others = [];
  for (let n = 1; n < agents; n++) {
    others.push(await startAgentRun(path.join(dir, `agent-${n}`), info, { ...common, sharing: first }));
  }
  try {
    const { names } = await writePdfs(first.staging, options.files);
    const dropped = dropAll(first, names);
    const startedAt = Math.min(...dropped.values());
    await waitFinished(first, names.length, options.timeoutMs);
    const tasks: TaskClaims['tasks'] = {};
    for (const run of [first, ...others]) {
      for (const [task, claims] of await clusterTaskClaims(run)) addClaims(tasks, task, claims);
    }
    const overSeconds = round((Date.now() - firstStarted) / 1000, 1);
    for (const other of others) await stopChild(other.child);
    const { times } = await finishAgentRun(first);
    const uploaded = names.map((name) => {
      const at = times.get(name)?.uploaded;
      if (at === undefined) throw new Error(`cluster: ${name} was not uploaded`);
      return at;
    });
    const seconds = (Math.max(...uploaded) - startedAt) / 1000;
    return {
      filesPerSecond: round(names.length / seconds),
      seconds: round(seconds, 2),
      tasks: { overSeconds, tasks },
    };
  } finally {
    for (const run of [first, ...others]) if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
}

/** Two agents, the first SIGKILLed once it holds files: how long until the other holds one of them. */
async function failover(
  dir: string,
  options: ClusterOptions,
  info: Parameters<typeof startAgentRun>[1],
): Promise<ClusterResult['failover']> {
  const url = await options.postgres.createDatabase();
  const journal = { kind: 'postgres' as const, url, poolSize: options.poolSize };
  const cluster = clusterSection(options.leaseMs);
  const common = { mainJs: options.mainJs, concurrency: options.concurrency, journal, cluster };
  const victim = await startAgentRun(path.join(dir, 'a'), info, common);
  const survivor = await startAgentRun(path.join(dir, 'b'), info, { ...common, sharing: victim });
  try {
    const { names } = await writePdfs(victim.staging, options.files);
    dropAll(victim, names);
    return await withClient(url, async (client) => {
      const victimId = async () =>
        (
          await client.query<{ id: string }>(
            "SELECT id FROM agents WHERE place LIKE '%' || $1 AND stopped_at IS NULL ORDER BY started_at DESC LIMIT 1",
            [path.join(dir, 'a', 'state')],
          )
        ).rows[0]?.id;
      let id: string | undefined;
      let held: string[] = [];
      const deadline = Date.now() + options.timeoutMs;
      while (held.length === 0) {
        if (Date.now() > deadline) throw new Error('cluster: the first agent never held a file');
        id ??= await victimId();
        if (id !== undefined) {
          held = (
            await client.query<{ id: string }>(
              "SELECT id FROM items WHERE owner = $1 AND kind = 'file' AND state NOT IN ('done', 'rejected')",
              [id],
            )
          ).rows.map((r) => r.id);
        }
        if (held.length === 0) await new Promise((r) => setTimeout(r, 20));
      }
      victim.child.kill('SIGKILL');
      const killedAt = Date.now();
      for (;;) {
        const moved = await client.query(
          'SELECT 1 FROM items WHERE id = ANY($1::bigint[]) AND owner IS DISTINCT FROM $2 LIMIT 1',
          [held, id],
        );
        if (moved.rowCount) break;
        if (Date.now() - killedAt > 10 * options.leaseMs) throw new Error('cluster: no file was taken over');
        await new Promise((r) => setTimeout(r, 20));
      }
      const ms = Date.now() - killedAt;
      const finished = await waitFinished(victim, names.length, options.timeoutMs);
      return {
        leaseMs: cluster.leaseMs,
        renewMs: cluster.renewMs,
        held: held.length,
        ms,
        vsLease: round(ms / cluster.leaseMs, 2),
        archived: finished.archived,
      };
    });
  } finally {
    await stopChild(survivor.child);
    if (victim.child.exitCode === null) victim.child.kill('SIGKILL');
  }
}

export async function benchCluster(options: ClusterOptions): Promise<ClusterResult> {
  const dir = scratchDir('docex-bench-cluster-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  const control = new SandboxControl(sandbox.info, 1);
  try {
    await control.addFault({ route: '/jobs/single-file', method: 'POST', latencyMs: options.latencyMs });
    await control.addFault({ route: '/upload/:jobId', method: 'PUT', latencyMs: options.latencyMs });
    type Run = Awaited<ReturnType<typeof burstThrough>>;
    const one: Run[] = [];
    const two: Run[] = [];
    for (let r = 0; r < options.rounds; r++) {
      // Alternated, so neither always meets the sandbox after the other.
      const order = r % 2 === 0 ? ([1, 2] as const) : ([2, 1] as const);
      for (const agents of order) {
        const run = await burstThrough(path.join(dir, `${agents}-${r}`), options, sandbox.info, agents);
        (agents === 1 ? one : two).push(run);
      }
    }
    const median = (runs: Run[]): ClusterThroughput => {
      const { filesPerSecond, seconds } = medianRun(runs, (x) => x.filesPerSecond);
      return { filesPerSecond, seconds, runs: runs.map((x) => x.filesPerSecond) };
    };
    // Every two-agent run's claims, summed: more firings than one run has.
    const twoTasks: TaskClaims = { overSeconds: 0, tasks: {} };
    for (const { tasks } of two) {
      twoTasks.overSeconds = round(twoTasks.overSeconds + tasks.overSeconds, 1);
      for (const [task, claims] of Object.entries(tasks.tasks)) addClaims(twoTasks.tasks, task, claims);
    }
    const failedOver = await failover(path.join(dir, 'failover'), options, sandbox.info);
    const oneMedian = median(one);
    const twoMedian = median(two);
    return {
      scenario: 'cluster',
      files: options.files,
      concurrency: options.concurrency,
      latencyMs: options.latencyMs,
      poolSize: options.poolSize,
      one: oneMedian,
      two: twoMedian,
      twoVsOne: round(twoMedian.filesPerSecond / oneMedian.filesPerSecond, 2),
      twoTasks,
      failover: failedOver,
    };
  } finally {
    await control.close();
    await sandbox.stop();
  }
}
