/**
 * The agent's controller: starts the long-running parts in order (state lock, journal, service
 * connection, folder check, pipeline with recovery, folder sources) and stops them in reverse,
 * gathering failures instead of stopping at the first (the zigbee2mqtt controller's habit).
 */
import path from 'node:path';
import type { ApiObserver, DocexClient } from '../api/index.js';
import type { AgentConfig } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import { type DocexError, isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { FOLDER_UNSAFE_CODE } from '../core/real-dir.js';
import { acquireJournalLock, DEFAULT_UPLOAD_MARGIN_MS, Journal } from '../journal/index.js';
import { OutputHealth } from '../outputs/health.js';
import { Inspector } from '../pipeline/isolate/inspector.js';
import { Pipeline, type RecoverySummary } from '../pipeline/pipeline.js';
import type { FolderRuntime, PipelineJobs } from '../pipeline/types.js';
import type { Inbound } from '../returns/inbound.js';
import type { FollowClient, Returns } from '../returns/index.js';
import { BlockedFiles } from './blocked-files.js';
import { liveCompanies } from './company-of.js';
import { openConnection, type SandboxService } from './connection.js';
import {
  createFolderSource,
  type FolderSource,
  type FolderSourceDeps,
  type SourceTiming,
} from './folder-source.js';
import { ensureFolderDirs, type FolderPlan, planFolders, type StoppedFolder } from './folders.js';
import {
  Housekeeping,
  journalRetentionPlace,
  outputRetentionPlaces,
  type RetentionPlace,
} from './housekeeping.js';

export const JOURNAL_FILE = 'journal.sqlite';

/** The archive and error folders of the running folders that have a retention. */
function retentionPlaces(plan: FolderPlan): RetentionPlace[] {
  const places: RetentionPlace[] = [];
  for (const { config: folder } of plan.running.values()) {
    // A configuration built without the schema (tests) has no retention: nothing to remove.
    const { archive, error } = folder.retention ?? {};
    if (archive)
      places.push({ folder: folder.name, place: 'archive', dir: folder.archiveDir, retentionMs: archive });
    if (error) places.push({ folder: folder.name, place: 'error', dir: folder.errorDir, retentionMs: error });
  }
  return places;
}

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
  /** Told of the opened client's requests, token fetches and uploads (metrics). */
  apiObserver?: ApiObserver;
  /** sandbox.enabled: starts the built-in sandbox (the command line's part); stopped with the agent. */
  startSandbox?: () => Promise<SandboxService>;
  /** Follower timing (tests with a ManualClock use a short real sleep). */
  returns?: { maxSleepMs?: number };
  /** An inspector shared by several agents (tests); otherwise one of config.inspection, stopped with the agent. */
  inspector?: Inspector;
}

/** What the agent calls on the service; a DocexClient fits. */
export interface AgentClient {
  jobs: PipelineJobs;
  workflows: Pick<DocexClient['workflows'], 'get'>;
  /** Needed to follow jobs (returns.enabled); without it the agent only submits. */
  sendingEvents?: FollowClient['sendingEvents'];
  /** Needed to save incoming Peppol documents (peppolInbox.enabled). */
  peppol?: Pick<DocexClient['peppol'], 'iterate' | 'downloadUrl' | 'downloadFile'>;
}

interface Part {
  name: string;
  stop(): Promise<void> | void;
}

export interface StopReport {
  failures: { part: string; error: unknown }[];
  drained: boolean;
}

/** A source's intake half (an SFTP source keeps its connection for the items still in flight). */
function stopIntake(source: FolderSource): Promise<void> {
  return source.stopIntake ? source.stopIntake() : source.stop();
}

async function closeSources(sources: Map<string, FolderSource>): Promise<void> {
  await Promise.all([...sources.values()].map((s) => s.close?.()));
}

/** What stopping one folder at run time touches (a reload's removal, or a folder found unsafe). */
interface RunningFolders {
  parts: Part[];
  sources: Map<string, FolderSource>;
  pipeline: Pipeline;
  plan: FolderPlan;
}

/** No new files are taken; files in flight finish first; then the folder leaves the running ones. */
async function retireFolder(name: string, running: RunningFolders): Promise<void> {
  const { parts, sources, pipeline, plan } = running;
  const source = sources.get(name);
  const at = parts.findIndex((p) => p.name === `source:${name}`);
  if (at >= 0) parts.splice(at, 1);
  if (source) await stopIntake(source);
  await pipeline.folderIdle(name);
  // Only now: items that finished while the folder drained still told their source (remote moves).
  if (sources.get(name) === source) sources.delete(name);
  await source?.close?.();
  plan.running.delete(name);
}

/**
 * A folder the agent writes into (`.processing`, archive, error, spool) was swapped for a link
 * while running: the folder stops with the reason (readiness and the stopped-folders gauge show
 * it); nothing more is written for it until it starts again (a reload, or a restart).
 */
function stopUnsafeFolder(running: RunningFolders, log: Logger, name: string, err: DocexError): void {
  const rt = running.plan.running.get(name);
  if (!rt || running.plan.stopped.some((s) => s.name === name)) return;
  running.plan.stopped.push({ name, workflowId: rt.config.workflowId, code: err.code, reason: err.message });
  log.error({ folder: name, code: err.code, reason: err.message }, 'folder stopped');
  retireFolder(name, running).catch((stopErr: unknown) =>
    log.error({ folder: name, err: stopErr }, 'folder failed to stop'),
  );
}

export class Agent {
  /** The job follower (webhooks nudge it); undefined when returns.enabled is false. */
  returns: Returns | undefined;
  /** The Peppol inbox and webhook receiver; undefined when both are off. */
  inbound: Inbound | undefined;
  /** Which output targets (statuses, proofs, Peppol inbox) fail to be written, and how often they did. */
  outputHealth: OutputHealth | undefined;
  /** Retention of the archive and error folders. */
  housekeeping: Housekeeping | undefined;

  private constructor(
    private readonly log: Logger,
    private readonly shutdown: { drained: boolean },
    private readonly parts: Part[],
    readonly journal: Journal,
    readonly client: AgentClient,
    readonly pipeline: Pipeline,
    readonly plan: FolderPlan,
    readonly recovery: RecoverySummary,
    readonly sandbox: SandboxService | undefined,
    private readonly sources: Map<string, FolderSource>,
    private readonly sourceDeps: Omit<FolderSourceDeps, 'pipeline'>,
  ) {}

  private stopping = false;

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
        if (config.sandbox.enabled && options.startSandbox) {
          const started = await options.startSandbox();
          sandbox = started;
          parts.push({ name: 'sandbox', stop: () => started.stop() });
        }
        const connection = openConnection(
          config,
          log,
          options.clock,
          options.apiObserver,
          sandbox?.clientOptions,
        );
        client = connection;
        parts.push({ name: 'client', stop: () => connection.close() });
      }
      const jobs = client.jobs;
      const workflows = client.workflows;

      const unsafe: StoppedFolder[] = [];
      for (const folder of config.folders.filter((f) => f.enabled)) {
        try {
          await ensureFolderDirs(folder);
        } catch (err) {
          if (!isDocexError(err, FOLDER_UNSAFE_CODE)) throw err;
          unsafe.push({
            name: folder.name,
            workflowId: folder.workflowId,
            code: err.code,
            reason: err.message,
          });
          log.error({ folder: folder.name, code: err.code, reason: err.message }, 'folder stopped');
        }
      }
      const plan = await planFolders(
        config.folders.filter((f) => !unsafe.some((u) => u.name === f.name)),
        (id, managedCompanyId) => workflows.get(id, managedCompanyId ? { managedCompanyId } : undefined),
        log,
      );
      plan.stopped.push(...unsafe);

      const sources = new Map<string, FolderSource>();
      const onFolderUnsafe = (name: string, err: DocexError) =>
        stopUnsafeFolder({ parts, sources, pipeline, plan }, log, name, err);
      const inspector = options.inspector ?? new Inspector(config.inspection, log);
      if (!options.inspector) parts.push({ name: 'inspector', stop: () => inspector.close() });
      const pipeline = new Pipeline({
        inspector,
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
        onFinished: (item) => sources.get(item.folder)?.finished?.(item),
        onFolderUnsafe,
      });
      const shutdown = { drained: true };
      // Before the pipeline, so stopped after it: items finishing in the grace still move their remote file.
      parts.push({ name: 'source connections', stop: () => closeSources(sources) });
      parts.push({
        name: 'pipeline',
        stop: async () => {
          shutdown.drained = (await pipeline.stop(config.shutdownGraceMs)).finished;
        },
      });
      const recovery = await pipeline.recover();
      log.info({ ...recovery }, 'recovery planned');

      const sourceDeps = { clock, log, journal, timing: options.source ?? {}, onFolderUnsafe };
      for (const rt of plan.running.values()) {
        const source = createFolderSource(rt, { pipeline, ...sourceDeps });
        await source.start();
        sources.set(rt.config.name, source);
        parts.push({ name: `source:${rt.config.name}`, stop: () => stopIntake(source) });
      }

      const blocked = new BlockedFiles({ journalFile: journal.file, clock, log });
      blocked.start();
      parts.push({ name: 'blocked-files', stop: () => blocked.stop() });

      const outputHealth = new OutputHealth(clock);
      let returns: Returns | undefined;
      if (config.returns.enabled && client.sendingEvents) {
        const { startReturns } = await import('../returns/index.js');
        const followed = startReturns({
          config: config.returns,
          stateDir: config.stateDir,
          journalFile: path.join(config.stateDir, JOURNAL_FILE),
          client: { jobs: client.jobs, sendingEvents: client.sendingEvents },
          clock,
          log,
          // Read live: a folder added by a reload brings its own managed company.
          ...liveCompanies(plan, config.folders),
          ...(options.returns?.maxSleepMs ? { maxSleepMs: options.returns.maxSleepMs } : {}),
          outputHealth,
        });
        returns = followed;
        parts.push({ name: 'returns', stop: () => followed.stop() });
      }

      // Incoming Peppol documents and the webhook receiver; deliveries nudge the follower.
      let inbound: Inbound | undefined;
      if ((config.peppolInbox.enabled && client.peppol) || config.webhooks.enabled) {
        const { startInbound, followerCallbacks } = await import('../returns/inbound.js');
        const started = await startInbound({
          config,
          client,
          clock,
          log,
          callbacks: followerCallbacks(returns?.follower, log),
          outputHealth,
        });
        inbound = started;
        parts.push({ name: 'inbound', stop: () => started.stop() });
      }

      // Retention of archive and error folders, read live (a reload may change them), and of the
      // outputs. Started after the outputs, so stopped before they close.
      const outputs = [...(returns?.outputs ?? []), ...(inbound?.outputs ?? [])];
      const housekeeping = new Housekeeping({
        places: () => [
          ...retentionPlaces(plan),
          ...outputRetentionPlaces(outputs),
          // A configuration built without the schema (tests) has no journal section.
          ...journalRetentionPlace(journal, config.journal?.retention),
        ],
        clock,
        log,
      });
      housekeeping.start();
      parts.push({ name: 'housekeeping', stop: () => housekeeping.stop() });

      const agent = new Agent(
        log,
        shutdown,
        parts,
        journal,
        client,
        pipeline,
        plan,
        recovery,
        sandbox,
        sources,
        sourceDeps,
      );
      agent.returns = returns;
      agent.inbound = inbound;
      agent.outputHealth = outputHealth;
      agent.housekeeping = housekeeping;
      log.info(
        { folders: [...plan.running.keys()], stopped: plan.stopped.map((s) => s.name), ...recovery },
        'agent started',
      );
      return agent;
    } catch (err) {
      return unwind(err);
    }
  }

  /**
   * Starts a folder at run time (a reload): its directories, the pipeline's folder map (read live),
   * recovery of what it left in `.processing/` and the journal, then its source.
   */
  async addFolder(rt: FolderRuntime): Promise<void> {
    const name = rt.config.name;
    // A reload that ends after stop() began starts nothing: no part would stop it.
    if (this.stopping) return;
    await ensureFolderDirs(rt.config);
    this.plan.running.set(name, rt);
    this.plan.stopped = this.plan.stopped.filter((s) => s.name !== name);
    const recovered = await this.pipeline.recover(name);
    const source = createFolderSource(rt, { pipeline: this.pipeline, ...this.sourceDeps });
    await source.start();
    if (this.stopping) {
      await source.stop();
      return;
    }
    this.sources.set(name, source);
    this.parts.push({ name: `source:${name}`, stop: () => stopIntake(source) });
    this.log.info({ folder: name, ...recovered }, 'folder started');
  }

  /** Stops a folder at run time (a reload): no new files are taken; files in flight finish first. */
  async removeFolder(name: string): Promise<void> {
    this.plan.stopped = this.plan.stopped.filter((s) => s.name !== name);
    await retireFolder(name, {
      parts: this.parts,
      sources: this.sources,
      pipeline: this.pipeline,
      plan: this.plan,
    });
    this.log.info({ folder: name }, 'folder stopped by reload');
  }

  /** Stops intake first, then lets in-flight work finish (up to shutdownGraceMs), then the rest. */
  async stop(): Promise<StopReport> {
    this.stopping = true;
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
