/** Rows, targets and notes of the cluster scenario (several agents on one journal) for bench/report.ts. */
import type { ClusterResult } from './cluster.js';

type Outcome = ClusterResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
const ofRuns = (runs: readonly number[]) => (runs.length > 1 ? `, median of ${runs.join(' / ')}` : '');

export const TARGET_TWO_VS_ONE = 1.8;
export const TARGET_FAILOVER_VS_LEASE = 1.5;

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
