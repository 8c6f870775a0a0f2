/**
 * The cluster section: how agents sharing one PostgreSQL journal (journal.url) see each other.
 * Each writes a heartbeat row; an agent whose last heartbeat (by the database's clock) is older
 * than deadAfterMs counts as dead. Without journal.url the agent is alone and none of this runs.
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
  })
  .superRefine((cluster, refinement) => {
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
    'Several agents on one PostgreSQL journal (journal.url): heartbeats, and when an agent counts as dead.',
  );

export type ClusterConfig = z.infer<typeof clusterSchema>;
