/**
 * The cluster section: how agents sharing one PostgreSQL journal (journal.url) see each other.
 * Each writes a heartbeat row; an agent whose last heartbeat (by the database's clock) is older
 * than deadAfterMs counts as dead. Each unfinished file is held by one agent under a lease (leaseMs,
 * renewed every renewMs) that another agent takes over once it runs out, by the database's clock.
 * Without journal.url the agent is alone and none of this runs.
 */
import { z } from 'zod';
import { durationMs } from './schema-types.js';

/** Shortest heartbeat period: a heartbeat is one statement, but not one a second. */
const MIN_HEARTBEAT_MS = 1_000;

export const clusterSchema = z
  .strictObject({
    heartbeatMs: durationMs(20_000).describe(
      'How often the agent writes its heartbeat (host, pid, version, last seen by the database’s clock) to the PostgreSQL journal. Only with journal.url.',
    ),
    deadAfterMs: durationMs(60_000).describe(
      'An agent whose last heartbeat is older than this (by the database’s clock) counts as dead: `docex-agent agents`, docex_agents_alive and the rolling-upgrade guard read it. At least twice heartbeatMs, so one late heartbeat is not a death.',
    ),
    leaseMs: durationMs(60_000).describe(
      'How long an agent holds a file it claimed without renewing its lease (by the database’s clock). When an agent dies or is frozen, another agent takes its files over once their leases ran out: failover takes up to leaseMs + renewMs. Only with journal.url.',
    ),
    renewMs: durationMs(20_000).describe(
      'How often the agent renews the leases of the files it holds, and looks for files whose lease ran out to take over. At most a third of leaseMs, so two renewals may fail before a lease runs out.',
    ),
    createMarginMs: durationMs(10_000).describe(
      'A job create is sent only within this long after its file’s lease was set (its claim, or a renewal made right before the create), and aborted this long before the lease could run out: the margin covers the database round trip and a short stall of the process. At most a quarter of leaseMs. See docs/high-availability.md for what it guarantees.',
    ),
  })
  .superRefine((cluster, refinement) => {
    if (cluster.renewMs * 3 > cluster.leaseMs) {
      refinement.addIssue({
        code: 'custom',
        path: ['renewMs'],
        message: `must be at most a third of leaseMs (${Math.floor(cluster.leaseMs / 3)} ms)`,
      });
    }
    if (cluster.createMarginMs * 4 > cluster.leaseMs) {
      refinement.addIssue({
        code: 'custom',
        path: ['createMarginMs'],
        message: `must be at most a quarter of leaseMs (${Math.floor(cluster.leaseMs / 4)} ms)`,
      });
    }
    if (cluster.renewMs < MIN_HEARTBEAT_MS) {
      refinement.addIssue({
        code: 'custom',
        path: ['renewMs'],
        message: `must be at least ${MIN_HEARTBEAT_MS} ms`,
      });
    }
    if (cluster.heartbeatMs < MIN_HEARTBEAT_MS) {
      refinement.addIssue({
        code: 'custom',
        path: ['heartbeatMs'],
        message: `must be at least ${MIN_HEARTBEAT_MS} ms`,
      });
    }
    if (cluster.deadAfterMs < 2 * cluster.heartbeatMs) {
      refinement.addIssue({
        code: 'custom',
        path: ['deadAfterMs'],
        message: `must be at least twice heartbeatMs (${2 * cluster.heartbeatMs} ms)`,
      });
    }
  })
  .prefault({})
  .describe(
    'Several agents on one PostgreSQL journal (journal.url): heartbeats, when an agent counts as dead, and the leases by which each file is held by one agent.',
  );

export type ClusterConfig = z.infer<typeof clusterSchema>;
