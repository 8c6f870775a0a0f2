/**
 * The agent's lease part, on a PostgreSQL journal (several agents may share it): every
 * cluster.renewMs it renews the leases of the files this agent holds (one statement), says which it
 * lost (another agent took them over: the pipeline stops touching them at its next step), then
 * takes over the files of its folders that no live agent holds any more (their leases ran out by
 * the database's clock), and the files of shared folders' `.processing/` that an agent moved in and
 * died before recording. On a SQLite journal the agent is alone and this part does nothing.
 *
 * A failed round (the database down) is logged once, and once more when a round works again; it
 * never stops the agent: while the journal does not answer, nothing is written for any file, and a
 * lease that runs out meanwhile is found lost at the next round.
 */
import type { ClusterConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { JournalLocation, JournalStore } from '../journal/index.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Part } from './parts.js';

/** Files taken over per round at most: a dead agent's backlog moves over in a few rounds. */
const TAKE_OVER_PER_ROUND = 1_000;

/** What the lease part counted since start (metrics). */
export interface LeaseCounts {
  /** Files taken over from another agent (or from an earlier start of this one). */
  takenOver: number;
  /** Files this agent held and found held by another agent. */
  lost: number;
  /** Rounds whose renewal failed (the database did not answer). */
  renewalsFailed: number;
}

export interface LeasePartOptions {
  location: JournalLocation;
  config: ClusterConfig;
  log: Logger;
  journal: () => JournalStore;
  pipeline: () => Pipeline;
  /** Files the recovery at start took over (counted in takenOver). */
  takenOverAtStart: () => number;
}

export class LeasePart implements Part {
  readonly name = 'leases';
  readonly counts: LeaseCounts = { takenOver: 0, lost: 0, renewalsFailed: 0 };
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private failing = false;
  private stopping = false;

  constructor(private readonly options: LeasePartOptions) {}

  async start(): Promise<void> {
    if (this.options.location.kind !== 'postgres') return;
    this.counts.takenOver += this.options.takenOverAtStart();
    const { leaseMs, renewMs } = this.options.config;
    this.options.log.info({ leaseMs, renewMs }, 'leases: renewed and taken over every renewMs');
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.round;
  }

  /** One round: renew, then take over (every renewMs). */
  private async renewAndTakeOver(): Promise<void> {
    const { log, config } = this.options;
    try {
      await this.renew();
      await this.takeOver();
      if (this.failing) {
        this.failing = false;
        log.info('leases renewed again');
      }
    } catch (err) {
      this.counts.renewalsFailed++;
      if (this.failing) return;
      this.failing = true;
      log.warn(
        { err, code: isDocexError(err) ? err.code : undefined, leaseMs: config.leaseMs },
        'lease renewal failed: files whose lease runs out meanwhile go to other agents; tried again every renewMs',
      );
    }
  }

  private async renew(): Promise<void> {
    // The journal logs each file lost, once, whether a renewal or a write finds it first.
    const { lost } = await this.options.journal().renewLeases();
    this.counts.lost += lost.length;
  }

  /** The pipeline logs each file taken over (`file taken over`) and resumes it. */
  private async takeOver(): Promise<void> {
    const { config, log } = this.options;
    const { takenOver, orphans } = await this.options
      .pipeline()
      .takeOver(TAKE_OVER_PER_ROUND, config.leaseMs);
    this.counts.takenOver += takenOver;
    if (orphans > 0) log.info({ files: orphans }, 'unrecorded files in .processing/ taken over');
  }

  private schedule(): void {
    if (this.stopping) return;
    // Unref'd: the renewal never keeps a stopping process alive; the agent's work does.
    this.timer = setTimeout(() => {
      this.round = this.renewAndTakeOver().finally(() => {
        this.round = undefined;
        this.schedule();
      });
    }, this.options.config.renewMs).unref();
  }
}
