/**
 * The return path's parts: the job follower (statuses and proofs; returns.enabled), then the
 * inbound side (the Peppol inbox and the webhook receiver, whose deliveries nudge the follower).
 * Each is loaded only when enabled and writes outputs whose health the ops endpoints read.
 */
import type { HostPace } from '../api/host-pace.js';
import type { AgentConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JournalLocation, TaskClaim } from '../journal/index.js';
import type { OutputHealth } from '../outputs/health.js';
import type { RetainedOutput } from '../outputs/retention.js';
import type { SharedWriting } from '../outputs/types.js';
import type { Inbound, InboundOptions } from '../returns/inbound.js';
import type { FollowClient, Returns } from '../returns/index.js';
import { relativePathOf } from '../sources/kinds.js';
import type { CompanyLookup } from './company-of.js';
import type { Part } from './parts.js';

export interface ReturnPathOptions {
  config: AgentConfig;
  clock: Clock;
  log: Logger;
  journal: JournalLocation;
  outputHealth: OutputHealth;
  /** The service client (a part started before these). */
  client: () => {
    jobs: FollowClient['jobs'];
    sendingEvents?: FollowClient['sendingEvents'] | undefined;
    peppol?: InboundOptions['client']['peppol'];
  };
  /** The managed company of a folder's jobs (read live: a reload may add folders). */
  companies: () => CompanyLookup;
  maxSleepMs?: number | undefined;
  /** Claims a task run once across the agents on the journal (the daily CSV). */
  claimTask?: TaskClaim;
  /** The pace of the service host, shared with the intake. */
  pace?: HostPace;
  /** Several agents on one journal write the outputs (SharedWriting). */
  sharedWriting?: SharedWriting | undefined;
}

/** The job follower; without a client that reads sending events the agent only submits. */
export class FollowerPart implements Part {
  readonly name = 'returns';
  returns: Returns | undefined;

  constructor(private readonly options: ReturnPathOptions) {}

  async start(): Promise<void> {
    const { config, clock, log } = this.options;
    const client = this.options.client();
    if (!config.returns.enabled || !client.sendingEvents) return;
    const { startReturns } = await import('../returns/index.js');
    this.returns = await startReturns({
      config: config.returns,
      stateDir: config.stateDir,
      journal: this.options.journal,
      client: { jobs: client.jobs, sendingEvents: client.sendingEvents },
      clock,
      log,
      ...this.options.companies(),
      // The path recorded at the claim; for a file an earlier agent recorded, read against the
      // folders as configured at start (a file of a folder gone or moved since keeps its name alone).
      relativePathOf: (source) =>
        relativePathOf(
          config.folders.find((f) => f.name === source.folder),
          source,
        ),
      ...(this.options.maxSleepMs ? { maxSleepMs: this.options.maxSleepMs } : {}),
      outputHealth: this.options.outputHealth,
      ...(this.options.claimTask ? { claimTask: this.options.claimTask } : {}),
      ...(this.options.pace ? { pace: this.options.pace } : {}),
      // Agents sharing the journal: a proof being fetched is one agent's for a lease's length.
      ...(this.options.journal.kind === 'postgres' ? { documentClaimMs: config.cluster.leaseMs } : {}),
      sharedWriting: this.options.sharedWriting,
    });
  }

  async stop(): Promise<void> {
    await this.returns?.stop();
  }
}

/** Incoming Peppol documents and the webhook receiver; deliveries nudge the follower. */
export class InboundPart implements Part {
  readonly name = 'inbound';
  inbound: Inbound | undefined;

  constructor(
    private readonly options: ReturnPathOptions,
    private readonly follower: FollowerPart,
  ) {}

  async start(): Promise<void> {
    const { config, clock, log } = this.options;
    const client = this.options.client();
    if (!(config.peppolInbox.enabled && client.peppol) && !config.webhooks.enabled) return;
    const { startInbound, followerCallbacks } = await import('../returns/inbound.js');
    this.inbound = await startInbound({
      config,
      journal: this.options.journal,
      client,
      clock,
      log,
      callbacks: followerCallbacks(this.follower.returns?.follower, log),
      outputHealth: this.options.outputHealth,
      ...(this.options.claimTask ? { claimTask: this.options.claimTask } : {}),
      sharedWriting: this.options.sharedWriting,
    });
  }

  async stop(): Promise<void> {
    await this.inbound?.stop();
  }
}

/** The outputs both parts write (statuses, proofs, the Peppol inbox), for retention. */
export function returnPathOutputs(follower: FollowerPart, inbound: InboundPart): RetainedOutput[] {
  return [...(follower.returns?.outputs ?? []), ...(inbound.inbound?.outputs ?? [])];
}
