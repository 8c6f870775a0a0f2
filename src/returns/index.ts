/**
 * The job-following part of the agent: opens the returns store (beside the journal: returns.sqlite
 * in the state folder, or the journal's PostgreSQL database) and the read-only journal feed,
 * creates the output targets and starts the follower. `returns.follower` is what webhooks and the
 * pipeline of this process (a job done) nudge.
 */

import { rmSync } from 'node:fs';
import path from 'node:path';
import type { HostPace } from '../api/host-pace.js';
import type { OutputTargetConfig } from '../config/output-schema.js';
import type { ReturnsConfig } from '../config/returns-schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JournalLocation, TaskClaim } from '../journal/index.js';
import type { OutputHealth } from '../outputs/health.js';
import { openOutputTarget } from '../outputs/open-target.js';
import type { RetainedOutput } from '../outputs/retention.js';
import type { OutputTarget, SharedWriting } from '../outputs/types.js';
import { RETURNS_TEMP_DIR } from './follow-tasks.js';
import { Follower, type FollowerOptions } from './follower.js';
import { JournalFeed } from './journal-feed.js';
import { openReturnsStore } from './open-stores.js';
import type { FollowClient } from './poll-job.js';
import type { ReturnsStore } from './store.js';

export { Follower } from './follower.js';
export { openExistingReturnsStore } from './open-stores.js';
export type { FollowClient } from './poll-job.js';
export type { ReturnsStore } from './store.js';

export interface ReturnsOptions {
  config: ReturnsConfig;
  stateDir: string;
  journal: JournalLocation;
  client: FollowClient;
  clock: Clock;
  log: Logger;
  companyOf?: (folder: string) => string | undefined;
  companies?: () => string[];
  /** A dropped file's path relative to its drop folder (Follower: its status and proofs keep the sub-path). */
  relativePathOf?: FollowerOptions['relativePathOf'];
  /** Replace the configured targets (tests, fault injection). */
  statusTarget?: OutputTarget;
  proofTarget?: OutputTarget;
  maxSleepMs?: number;
  /** The pace of the service host, shared with the intake. */
  pace?: HostPace | undefined;
  /** Told of every write to the statuses and proofs outputs. */
  outputHealth?: OutputHealth;
  /** Claims a task run once across the agents on the journal (the daily CSV). */
  claimTask?: TaskClaim;
  /** Several agents on one journal: a document being fetched is claimed this long (proofs.ts). */
  documentClaimMs?: number;
  /** Several agents on one journal write the outputs: temp names of this agent's own. */
  sharedWriting?: SharedWriting | undefined;
}

export interface Returns {
  readonly follower: Follower;
  readonly store: ReturnsStore;
  /** The statuses and proofs outputs, for retention. */
  readonly outputs: RetainedOutput[];
  stop(): Promise<void>;
}

/** A target from its config: a local folder or an SFTP folder (which connects at its first write). */
export function openTarget(
  config: OutputTargetConfig,
  log: Logger,
  at: string,
  health?: OutputHealth,
  shared?: SharedWriting,
): OutputTarget {
  return openOutputTarget(config, { log, at, shared, ...(health ? { health } : {}) });
}

export async function startReturns(options: ReturnsOptions): Promise<Returns> {
  const { config, clock, log } = options;
  rmSync(path.join(options.stateDir, RETURNS_TEMP_DIR), { recursive: true, force: true });
  const store = await openReturnsStore(options.journal, options.stateDir, clock, { log });
  let feed: JournalFeed | undefined;
  try {
    feed = await JournalFeed.open(options.journal);
    const shared = options.sharedWriting;
    const statusTarget =
      options.statusTarget ??
      openTarget(config.statuses.target, log, 'returns.statuses.target', options.outputHealth, shared);
    const proofTarget =
      options.proofTarget ??
      openTarget(config.proofs.target, log, 'returns.proofs.target', options.outputHealth, shared);
    const follower = new Follower({
      store,
      feed,
      client: options.client,
      config,
      statusTarget,
      proofTarget,
      stateDir: options.stateDir,
      clock,
      log,
      ...(options.companyOf ? { companyOf: options.companyOf } : {}),
      itemCompany: (itemId: number) => feed!.itemCompany(itemId),
      ...(options.companies ? { companies: options.companies } : {}),
      ...(options.relativePathOf ? { relativePathOf: options.relativePathOf } : {}),
      ...(options.maxSleepMs ? { maxSleepMs: options.maxSleepMs } : {}),
      ...(options.claimTask ? { claimTask: options.claimTask } : {}),
      ...(options.documentClaimMs ? { documentClaimMs: options.documentClaimMs } : {}),
      ...(options.pace ? { pace: options.pace } : {}),
    });
    follower.start();
    log.info(
      {
        statuses: statusTarget.description,
        proofs: proofTarget.description,
        store: store.location,
        ...(await store.counts()),
      },
      'returns started',
    );
    const openFeed = feed;
    return {
      follower,
      store,
      outputs: [
        { place: 'statuses', target: statusTarget, retentionMs: config.statuses.target.retention },
        { place: 'proofs', target: proofTarget, retentionMs: config.proofs.target.retention },
      ],
      async stop() {
        try {
          await follower.stop();
        } finally {
          await openFeed.close();
          await store.close();
          await Promise.allSettled([statusTarget.close(), proofTarget.close()]);
        }
      },
    };
  } catch (err) {
    await feed?.close();
    await store.close();
    throw err;
  }
}
