/**
 * The agent's cluster part, started right after the journal (which migrated the cluster tables):
 * on a PostgreSQL journal it writes this agent's heartbeat row at start and every
 * cluster.heartbeatMs, and marks it stopped at a graceful stop, so other agents, `docex-agent
 * agents` and docex_agents_alive see it; it also answers the claims of tasks run once across the
 * agents (housekeeping, the daily CSV). On a SQLite journal the agent is alone: nothing is written.
 *
 * A heartbeat that fails (the database down) is logged once as a warning, and once more when one
 * is written again; it never stops the agent: the journal's own outage handling decides what the
 * agent does meanwhile. A heartbeat that finds the journal migrated past this agent's version (a
 * newer agent's, while this one counted as dead) is logged once as an error and told to the agent
 * (onNewerSchema), which stops rather than misread the newer schema.
 */
import type { ClusterConfig } from '../config/index.js';
import { type DocexError, isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import {
  type AgentIdentity,
  type ClusterStore,
  type JournalLocation,
  openCluster,
  type TaskClaim,
} from '../journal/index.js';
import { madeBy, type Part } from './parts.js';

export interface ClusterPartOptions {
  location: JournalLocation;
  config: ClusterConfig;
  log: Logger;
  /** This agent (default: a fresh id, this host and pid, the package's version). */
  identity?: AgentIdentity;
  /** Opens the store (default: openCluster at `location`; tests bring one that fails on demand). */
  open?: () => Promise<ClusterStore>;
  /** Told once when a heartbeat finds the journal migrated past this agent's version. */
  onNewerSchema?: (err: DocexError) => void;
}

export class ClusterPart implements Part {
  readonly name = 'cluster';
  private store: ClusterStore | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private failing = false;
  /** The journal's schema was found newer than this agent's (said once). */
  private newerSchema = false;
  private stopping = false;

  constructor(private readonly options: ClusterPartOptions) {}

  get cluster(): ClusterStore {
    return madeBy(this.name, this.store);
  }

  /** Claims of once-across-the-agents tasks since start, by task: won (ran here) or left to another. */
  readonly taskClaims = new Map<string, { ran: number; left: number }>();

  /** Whether this agent should run a once-across-the-agents task now (errors reject). */
  readonly claim: TaskClaim = async (name, periodMs, firingAt) => {
    const ours = await this.cluster.claimPeriodicTask(name, periodMs, firingAt);
    const tally = this.taskClaims.get(name) ?? { ran: 0, left: 0 };
    if (ours) tally.ran++;
    else tally.left++;
    this.taskClaims.set(name, tally);
    return ours;
  };

  async start(): Promise<void> {
    const { location, config, log, identity, open } = this.options;
    this.store = open
      ? await open()
      : await openCluster(
          location,
          { deadAfterMs: config.deadAfterMs, ...(identity ? { identity } : {}) },
          log,
        );
    if (!this.store.shared) return;
    await this.beat();
    const { id, host, pid, version } = this.store.self;
    log.info(
      { agentId: id, host, pid, version, heartbeatMs: config.heartbeatMs, deadAfterMs: config.deadAfterMs },
      'cluster heartbeat started',
    );
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating;
    const store = this.store;
    if (!store) return;
    if (store.shared) {
      try {
        await store.markStopped();
      } catch (err) {
        this.options.log.warn(
          { err, code: isDocexError(err) ? err.code : undefined },
          'cluster: marking this agent stopped failed; other agents count it dead after deadAfterMs',
        );
      }
    }
    await store.close();
  }

  private schedule(): void {
    if (this.stopping) return;
    // Unref'd: the heartbeat never keeps a stopping process alive; the agent's work does.
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = undefined;
        this.schedule();
      });
    }, this.options.config.heartbeatMs).unref();
  }

  private async beat(): Promise<void> {
    const { log, config } = this.options;
    try {
      await this.cluster.heartbeat();
      if (this.failing) {
        this.failing = false;
        log.info('cluster heartbeat written again');
      }
    } catch (err) {
      if (isDocexError(err, 'DOCEX_JOURNAL_VERSION')) {
        // The heartbeat was written: the database answers. Said once, and told to the agent.
        if (this.failing) log.info('cluster heartbeat written again');
        this.failing = false;
        if (this.newerSchema) return;
        this.newerSchema = true;
        log.error(
          { err, code: err.code, deadAfterMs: config.deadAfterMs },
          'cluster: a newer agent migrated the journal past this agent’s version while this one counted as dead (no heartbeat for deadAfterMs): this agent stops; upgrade it',
        );
        this.options.onNewerSchema?.(err);
        return;
      }
      if (this.failing) return;
      this.failing = true;
      log.warn(
        { err, code: isDocexError(err) ? err.code : undefined, deadAfterMs: config.deadAfterMs },
        'cluster heartbeat failed: other agents count this one dead after deadAfterMs; tried again every heartbeatMs',
      );
    }
  }
}
