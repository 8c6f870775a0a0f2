/** Rows, targets and notes of the cluster scenario (several agents on one journal) for bench/report.ts. */
import type { ClusterResult } from './cluster.js';

type Outcome = ClusterResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
const ofRuns = (runs: readonly number[]) => (runs.length > 1 ? `, median of ${runs.join(' / ')}` : '');

const TARGET_TWO_VS_ONE = 1.8;
const TARGET_FAILOVER_VS_LEASE = 1.5;

export function clusterRows(r: Outcome): string[][] {
  if (r === undefined) return [];
  const name = 'cluster: agents on one PostgreSQL journal and one folder';
  if (isError(r)) return [[name, 'failed', r.error, '', '', '']];
  const label = `burst ${r.files}, service +${r.latencyMs} ms per call, c=${r.concurrency} per agent, pool ${r.poolSize}`;
  const f = r.failover;
  return [
    [label, 'one agent', `${r.one.filesPerSecond} files/s${ofRuns(r.one.runs)}`, '', '', ''],
    [
      label,
      'two agents',
      `${r.two.filesPerSecond} files/s${ofRuns(r.two.runs)}`,
      '',
      '',
      `${r.twoVsOne}× one agent (target ≥ ${TARGET_TWO_VS_ONE}×)`,
    ],
    ...Object.entries(r.twoTasks?.tasks ?? {}).map(([task, { ran, left }]) => [
      `tasks run once across two agents (${r.twoTasks.overSeconds} s of two-agent runs)`,
      task,
      `ran ${ran}, left ${left}`,
      '',
      '',
      `one agent runs each firing, the other leaves it (${r.two.runs.length} run${r.two.runs.length === 1 ? '' : 's'} of two agents)`,
    ]),
    [
      `failover, lease ${f.leaseMs / 1000} s renewed every ${f.renewMs / 1000} s`,
      'SIGKILL → first of its files held by the other agent',
      `${(f.ms / 1000).toFixed(1)} s (${f.held} files held)`,
      '',
      '',
      `${f.vsLease}× the lease (target < ${TARGET_FAILOVER_VS_LEASE}×); ${f.archived} of ${r.files} archived after`,
    ],
  ];
}

export function clusterTargets(r: Outcome): string[] {
  if (r === undefined || isError(r)) return [];
  const f = r.failover;
  return [
    `Two agents ≥ ${TARGET_TWO_VS_ONE}× one agent, service ${r.latencyMs} ms away: ${r.twoVsOne}× (${r.two.filesPerSecond} against ${r.one.filesPerSecond} files/s) — ${mark(r.twoVsOne >= TARGET_TWO_VS_ONE)}.`,
    `Failover < ${TARGET_FAILOVER_VS_LEASE}× the lease: ${(f.ms / 1000).toFixed(1)} s with a lease of ${f.leaseMs / 1000} s, ${f.vsLease}× — ${mark(f.vsLease < TARGET_FAILOVER_VS_LEASE)}.`,
  ];
}

export const CLUSTER_NOTES = `
## Several agents on one PostgreSQL journal (cluster)

\`npm run bench -- --only cluster\` (bench/cluster.ts): the burst with the service 25 ms away, taken
by one agent and then by two agent processes on the same drop folder and database (each with
concurrency 8 and its own state folder), three rounds, the median run; then two agents with leases
of 15 s (renewed every 5 s), one SIGKILLed once it holds files, and the time until the other holds
the first of them (polled in the database every 20 ms).

The tasks row sums both agents' \`docex_cluster_tasks_total\` over the three two-agent runs: each
agent sweeps once at its start (its own), then one agent per firing of the follow schedule (every
5 s) runs the sweep and the other leaves it, so \`ran\` is the firings plus the starts and \`left\`
the firings both agents saw.

What limits the ratio here: this machine has 2 cores. A file costs the agent 7–7.5 ms of CPU on a
PostgreSQL journal and the server 3 ms more (the burst-pg rows above), so one agent at 90 files/s
already needs about one core of the two, with the sandbox on the same two. Two agents find the cores
taken, not the service: the 1.8× target needs each agent on a machine of its own (the two-host
set-up it stands for), which this bench cannot give; the figure is not a measure of that set-up.
The journal's round trips per file fell from 16 to 9 between the session that measured 1.28× (87
and 111.5 files/s) and the one that measured 1.36× (89.8 and 122.3): one agent, latency-bound at
8 files in flight with the service 25 ms away, hardly moved; two agents gained what the cores gave
back.
The failover time is when the dead agent's lease runs out (between leaseMs − renewMs and leaseMs
after the kill, by when it last renewed) plus up to one renewal round of the survivor: between
0.67× and 1.33× the lease by construction.
`;
