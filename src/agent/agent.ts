/**
 * The agent's controller: starts the long-running parts in order (state lock, journal, service
 * connection, folder check, pipeline with recovery, folder sources) and stops them in reverse,
 * gathering failures instead of stopping at the first (the zigbee2mqtt controller's habit).
 */
import path from 'node:path';
import type { DocexClient } from '../api/index.js';
import type { AgentConfig } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { acquireJournalLock, DEFAULT_UPLOAD_MARGIN_MS, Journal } from '../journal/index.js';
import { Pipeline, type RecoverySummary } from '../pipeline/pipeline.js';
import type { PipelineJobs } from '../pipeline/types.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { openConnection } from './connection.js';
import { createFolderSource, type FolderSource, type SourceTiming } from './folder-source.js';
import { ensureFolderDirs, type FolderPlan, planFolders, type StoppedFolder } from './folders.js';

export const JOURNAL_FILE = 'journal.sqlite';

export interface AgentOptions {
  config: AgentConfig;
  log: Logger;
  clock?: Clock;
  /** Source timing (tests use short ones). */
  source?: SourceTiming;
  uploadMarginMs?: number;
  retryDelayMs?: (n: number) => number;
  /** An existing client (tests, one-shot commands); otherwise one is opened from the config. */
  client?: AgentClient;
}

/** What the agent calls on the service; a DocexClient fits. */
export interface AgentClient {
  jobs: PipelineJobs;
  workflows: Pick<DocexClient['workflows'], 'get'>;
}

interface Part {
  name: string;
  stop(): Promise<void> | void;
}

export interface StopReport {
  failures: { part: string; error: unknown }[];
  drained: boolean;
}

export class Agent {
  private constructor(
    private readonly log: Logger,
    private readonly shutdown: { drained: boolean },
    private readonly parts: Part[],
    readonly journal: Journal,
    readonly client: AgentClient,
    readonly pipeline: Pipeline,
    readonly plan: FolderPlan,
    readonly recovery: RecoverySummary,
    readonly sandbox: RunningSandbox | undefined,
  ) {}

  get stoppedFolders(): StoppedFolder[] {
    return this.plan.stopped;
  }

  static async start(options: AgentOptions): Promise<Agent> {
    const { config, log } = options;
    const clock = options.clock ?? systemClock;
    const parts: Part[] = [];
    const unwind = async (err: unknown): Promise<never> => {
      for (const part of parts.reverse()) {
        try {
          await part.stop();
        } catch (stopErr) {
          log.error({ part: part.name, err: stopErr }, 'part failed to stop');
        }
      }
      throw err;
    };
    try {
      const lock = acquireJournalLock(config.stateDir);
      parts.push({ name: 'lock', stop: () => lock.release() });
      const journal = Journal.open(path.join(config.stateDir, JOURNAL_FILE), { clock, log });
      parts.push({ name: 'journal', stop: () => journal.close() });

      let client = options.client;
      let sandbox: Agent['sandbox'];
      if (!client) {
        const connection = await openConnection(config, log, options.clock);
        client = connection.client;
        sandbox = connection.sandbox;
        if (sandbox) parts.push({ name: 'sandbox', stop: () => sandbox!.stop() });
        parts.push({ name: 'client', stop: () => connection.client.close() });
      }
      const jobs = client.jobs;
      const workflows = client.workflows;

      for (const folder of config.folders.filter((f) => f.enabled)) await ensureFolderDirs(folder);
      const plan = await planFolders(
        config.folders,
        (id, managedCompanyId) => workflows.get(id, managedCompanyId ? { managedCompanyId } : undefined),
        log,
      );

      const sources = new Map<string, FolderSource>();
      const pipeline = new Pipeline({
        journal,
        jobs,
        clock,
        log,
        maxFileBytes: config.maxFileBytes,
        uploadMarginMs: options.uploadMarginMs ?? DEFAULT_UPLOAD_MARGIN_MS,
        lookupMarginMs: 15 * 60_000,
        folders: plan.running,
        concurrency: config.concurrency,
        onBacklog: (folder, full) => {
          const source = sources.get(folder);
          if (full) source?.pause();
          else {
            source?.resume();
            // Take the next files now rather than at the next stat-loop pass.
            void source?.tick();
          }
          log.debug({ folder, full }, full ? 'intake paused' : 'intake resumed');
        },
        ...(options.retryDelayMs ? { retryDelayMs: options.retryDelayMs } : {}),
      });
      const shutdown = { drained: true };
      parts.push({
        name: 'pipeline',
        stop: async () => {
          shutdown.drained = (await pipeline.stop(config.shutdownGraceMs)).finished;
        },
      });
      const recovery = await pipeline.recover();
      log.info({ ...recovery }, 'recovery planned');

      for (const rt of plan.running.values()) {
        const source = createFolderSource(rt, { pipeline, clock, log, timing: options.source ?? {} });
        await source.start();
        sources.set(rt.config.name, source);
        parts.push({ name: `source:${rt.config.name}`, stop: () => source.stop() });
      }

      const agent = new Agent(log, shutdown, parts, journal, client, pipeline, plan, recovery, sandbox);
      log.info(
        { folders: [...plan.running.keys()], stopped: plan.stopped.map((s) => s.name), ...recovery },
        'agent started',
      );
      return agent;
    } catch (err) {
      return unwind(err);
    }
  }

  /** Stops intake first, then lets in-flight work finish (up to shutdownGraceMs), then the rest. */
  async stop(): Promise<StopReport> {
    const failures: StopReport['failures'] = [];
    for (const part of this.parts.splice(0).reverse()) {
      try {
        await part.stop();
      } catch (error) {
        failures.push({ part: part.name, error });
        this.log.error({ part: part.name, err: error }, 'part failed to stop');
      }
    }
    const drained = this.shutdown.drained;
    this.log.info({ drained, failures: failures.length }, 'agent stopped');
    return { failures, drained };
  }
}
