/**
 * The folders part: which drop folders run (their directories and workflow checks), the pipeline
 * with its recovery of what a previous run left, and each running folder's source. Stopped intake
 * first, then the pipeline lets work in flight finish (up to shutdownGraceMs), then the sources'
 * connections close. A reload adds and removes folders while it runs.
 */
import type { HostPace } from '../api/host-pace.js';
import { DEFAULT_TIMEOUTS } from '../api/index.js';
import type { AgentConfig, FolderConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { type DocexError, isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { FOLDER_UNSAFE_CODE } from '../core/real-dir.js';
import type { JournalStore } from '../journal/index.js';
import type { Inspector } from '../pipeline/isolate/inspector.js';
import { Pipeline, type RecoverySummary } from '../pipeline/pipeline.js';
import type { FolderRuntime, PipelineJobs } from '../pipeline/types.js';
import { folderKey, SOURCE_FOLDER_MISSING_CODE } from '../sources/drop-folder.js';
import type { FolderSource, SourceTiming } from '../sources/folder-source.js';
import type { UnreadableFile } from '../sources/local/index.js';
import type { SharedClaims } from '../sources/sftp/source.js';
import { createFolderSource } from './folder-source.js';
import {
  ensureFolderDirs,
  type FolderPlan,
  planFolders,
  type StoppedFolder,
  type WorkflowFetch,
} from './folders.js';
import type { RetentionPlace } from './housekeeping.js';
import { madeBy, type Part } from './parts.js';

export interface RunningFoldersOptions {
  config: AgentConfig;
  clock: Clock;
  log: Logger;
  /** Parts started before this one. */
  journal: () => JournalStore;
  jobs: () => PipelineJobs;
  inspector: () => Inspector;
  fetchWorkflow: WorkflowFetch;
  timing: SourceTiming;
  uploadMarginMs: number;
  retryDelayMs?: ((n: number) => number) | undefined;
  windowRecheckMs?: number | undefined;
  collectEveryFiles?: number | undefined;
  /** True once the agent began to stop: a folder a reload adds then starts nothing. */
  stopping: () => boolean;
  /** Several agents share the journal: SFTP folders claim into a folder of this agent's own. */
  sftpClaims?: () => SharedClaims | undefined;
  /** Files the pipeline took over from another agent with a copy of their own (SFTP). */
  onTakenOver?: (files: number) => void;
  /** The files some local folder cannot read, stat or move changed (or a folder left with its list). */
  onUnreadableChange?: () => void;
  /** An item with a job was recorded done: the return path's follower reads the journal now. */
  onJobDone?: () => void;
  /** The pace of the service host, shared with the return path. */
  pace?: HostPace;
}

/** A running local folder and the files it reports the agent cannot read, stat or move (often none). */
export interface FolderUnreadable {
  folder: string;
  files: UnreadableFile[];
}

/** The local folders the agent writes into, whichever folder they serve: a recursive folder never enters them. */
function agentDirsOf(config: AgentConfig): string[] {
  const targets = [config.returns.statuses.target, config.returns.proofs.target, config.peppolInbox.target];
  return [
    config.stateDir,
    ...targets.flatMap((target) => (target.type === 'local' ? [target.path] : [])),
    ...config.folders.flatMap((folder) => [folder.archiveDir, folder.errorDir]),
  ];
}

const withSharedClaims = (claims: SharedClaims | undefined) => (claims ? { sharedClaims: claims } : {});

/** Errors of a folder's directories that stop that folder only (the others run). */
const stopsTheFolder = (err: unknown): err is DocexError =>
  isDocexError(err, FOLDER_UNSAFE_CODE) || isDocexError(err, SOURCE_FOLDER_MISSING_CODE);

/** The path and config key a folder error names (a missing drop folder), as log fields. */
function placeFields(err: DocexError): { path?: unknown; at?: unknown } {
  const { path, at } = (err.details ?? {}) as { path?: unknown; at?: unknown };
  return { ...(path === undefined ? {} : { path }), ...(at === undefined ? {} : { at }) };
}

/** A source's intake half (an SFTP source keeps its connection for the items still in flight). */
function stopIntake(source: FolderSource): Promise<void> {
  return source.stopIntake ? source.stopIntake() : source.stop();
}

export class RunningFolders implements Part {
  readonly name = 'folders';
  private planned: FolderPlan | undefined;
  private pipe: Pipeline | undefined;
  private recovered: RecoverySummary | undefined;
  /** Every folder's source: the pipeline's backlog pauses them, its finished items reach them (remote moves). */
  private readonly sources = new Map<string, FolderSource>();
  /** The sources still taking files, in start order. */
  private readonly intakes: { name: string; source: FolderSource }[] = [];
  /** Each started folder's key in the configuration it came from (`folders[2]`), for the errors that name it. */
  private readonly keys = new Map<string, string>();
  /** Whether the pipeline's last stop saw every item in flight finish within the grace. */
  drained = true;

  constructor(private readonly options: RunningFoldersOptions) {}

  get plan(): FolderPlan {
    return madeBy('folder plan', this.planned);
  }

  get pipeline(): Pipeline {
    return madeBy('pipeline', this.pipe);
  }

  get recovery(): RecoverySummary {
    return madeBy('recovery', this.recovered);
  }

  async start(): Promise<void> {
    const { config, clock, log } = this.options;
    const plan = await this.planStart();
    this.planned = plan;
    const sources = this.sources;
    this.pipe = new Pipeline({
      inspector: this.options.inspector(),
      journal: this.options.journal(),
      jobs: this.options.jobs(),
      clock,
      log,
      maxFileBytes: config.maxFileBytes,
      uploadMarginMs: this.options.uploadMarginMs,
      lookupMarginMs: 15 * 60_000,
      unansweredSettleMs: (config.service?.timeouts ?? DEFAULT_TIMEOUTS).headersMs,
      createMarginMs: config.cluster.createMarginMs,
      folders: plan.running,
      // An item whose workflow no route names any more is checked against its own (fetched once).
      fetchWorkflow: this.options.fetchWorkflow,
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
      ...(this.options.retryDelayMs ? { retryDelayMs: this.options.retryDelayMs } : {}),
      ...(this.options.collectEveryFiles ? { collectEveryFiles: this.options.collectEveryFiles } : {}),
      ...(this.options.windowRecheckMs ? { windowRecheckMs: this.options.windowRecheckMs } : {}),
      onFinished: (item) => sources.get(item.folder)?.finished?.(item),
      onLeft: (item) => sources.get(item.folder)?.left?.(item),
      ...(this.options.onTakenOver ? { onTakenOver: this.options.onTakenOver } : {}),
      ...(this.options.onJobDone ? { onJobDone: this.options.onJobDone } : {}),
      ...(this.options.pace ? { pace: this.options.pace } : {}),
      onFolderUnsafe: (name, err) => this.stopUnsafe(name, err),
    });
    this.recovered = await this.pipe.recover();
    log.info({ ...this.recovered }, 'recovery planned');
    for (const runtime of plan.running.values()) await this.startSource(runtime);
  }

  /** Intake first, then the pipeline's grace, then the connections items finishing in it still used. */
  async stop(): Promise<void> {
    const errors: unknown[] = [];
    const attempt = async (step: () => Promise<void>) => {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    };
    for (const { source } of this.intakes.splice(0).reverse()) await attempt(() => stopIntake(source));
    const pipeline = this.pipe;
    if (pipeline) {
      await attempt(async () => {
        this.drained = (await pipeline.stop(this.options.config.shutdownGraceMs)).finished;
      });
    }
    await attempt(async () => {
      await Promise.all([...this.sources.values()].map((s) => s.close?.()));
    });
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} folder parts failed to stop`);
  }

  /**
   * Starts a folder at run time (a reload): its directories, the pipeline's folder map (read live),
   * recovery of what it left in `.processing/` and the journal, then its source. `at` is its key in
   * the configuration read (`folders[2]`); a missing drop folder stops it, as at start.
   */
  async add(runtime: FolderRuntime, at: string): Promise<void> {
    const name = runtime.config.name;
    // A reload that ends after stop() began starts nothing: nothing would stop it.
    if (this.options.stopping()) return;
    try {
      await ensureFolderDirs(runtime.config, { at, log: this.options.log });
    } catch (err) {
      if (!stopsTheFolder(err)) throw err;
      this.plan.stopped = [
        ...this.plan.stopped.filter((s) => s.name !== name),
        this.stoppedBy(runtime.config, err),
      ];
      return;
    }
    this.plan.running.set(name, runtime);
    this.plan.stopped = this.plan.stopped.filter((s) => s.name !== name);
    this.keys.set(name, at);
    const recovered = await this.pipeline.recover(name);
    const source = createFolderSource(runtime, this.sourceDeps(name));
    await source.start();
    if (this.options.stopping()) {
      await source.stop();
      return;
    }
    this.register(name, source);
    this.options.log.info({ folder: name, ...recovered }, 'folder started');
  }

  /** Stops a folder at run time (a reload): no new files are taken; files in flight finish first. */
  async remove(name: string): Promise<void> {
    this.plan.stopped = this.plan.stopped.filter((s) => s.name !== name);
    await this.retire(name);
    this.options.log.info({ folder: name }, 'folder stopped by reload');
  }

  /** Every running local folder, with the files in it the agent cannot read, stat or move. */
  unreadableFiles(): FolderUnreadable[] {
    return [...this.sources].flatMap(([folder, source]) =>
      source.unreadableFiles ? [{ folder, files: source.unreadableFiles() }] : [],
    );
  }

  /** The archive and error folders of the running folders that have a retention. */
  retentionPlaces(): RetentionPlace[] {
    const places: RetentionPlace[] = [];
    for (const { config: folder } of this.plan.running.values()) {
      // A configuration built without the schema (tests) has no retention: nothing to remove.
      const { archive, error } = folder.retention ?? {};
      if (archive)
        places.push({ folder: folder.name, place: 'archive', dir: folder.archiveDir, retentionMs: archive });
      if (error)
        places.push({ folder: folder.name, place: 'error', dir: folder.errorDir, retentionMs: error });
    }
    return places;
  }

  /** A folder stopped by its directories, with one error line naming it, the code and (missing) the path and key. */
  private stoppedBy(folder: FolderConfig, err: DocexError): StoppedFolder {
    this.options.log.error(
      { folder: folder.name, code: err.code, ...placeFields(err), reason: err.message },
      'folder stopped',
    );
    return { name: folder.name, workflowId: folder.workflowId, code: err.code, reason: err.message };
  }

  /**
   * The enabled folders' directories (a drop folder missing, or one found unsafe, stops that folder
   * only), then their workflow checks.
   */
  private async planStart(): Promise<FolderPlan> {
    const { config, log } = this.options;
    const unsafe: FolderPlan['stopped'] = [];
    for (const folder of config.folders) {
      if (!folder.enabled) continue;
      const at = folderKey(config.folders, folder.name);
      this.keys.set(folder.name, at);
      try {
        await ensureFolderDirs(folder, { at, log });
      } catch (err) {
        if (!stopsTheFolder(err)) throw err;
        unsafe.push(this.stoppedBy(folder, err));
      }
    }
    const plan = await planFolders(
      config.folders.filter((f) => !unsafe.some((u) => u.name === f.name)),
      this.options.fetchWorkflow,
      log,
    );
    plan.stopped.push(...unsafe);
    return plan;
  }

  private sourceDeps(name: string) {
    const { clock, log, timing } = this.options;
    const at = this.keys.get(name);
    return {
      ...(at === undefined ? {} : { at }),
      pipeline: this.pipeline,
      clock,
      log,
      journal: this.options.journal(),
      timing,
      ...withSharedClaims(this.options.sftpClaims?.()),
      onFolderUnsafe: (name: string, err: DocexError) => this.stopUnsafe(name, err),
      agentDirs: agentDirsOf(this.options.config),
      ...(this.options.onUnreadableChange ? { onUnreadableChange: this.options.onUnreadableChange } : {}),
    };
  }

  private async startSource(runtime: FolderRuntime): Promise<void> {
    const source = createFolderSource(runtime, this.sourceDeps(runtime.config.name));
    await source.start();
    this.register(runtime.config.name, source);
  }

  private register(name: string, source: FolderSource): void {
    this.sources.set(name, source);
    this.intakes.push({ name, source });
  }

  /** No new files are taken; files in flight finish first; then the folder leaves the running ones. */
  private async retire(name: string): Promise<void> {
    const source = this.sources.get(name);
    const at = this.intakes.findIndex((intake) => intake.name === name);
    if (at >= 0) this.intakes.splice(at, 1);
    if (source) await stopIntake(source);
    await this.pipeline.folderIdle(name);
    // Only now: items that finished while the folder drained still told their source (remote moves).
    if (this.sources.get(name) === source) {
      this.sources.delete(name);
      this.keys.delete(name);
    }
    if (source?.unreadableFiles?.().length) this.options.onUnreadableChange?.();
    await source?.close?.();
    this.plan.running.delete(name);
  }

  /**
   * A folder the agent writes into (`.processing`, archive, error, spool) was swapped for a link
   * while running: the folder stops with the reason (readiness and the stopped-folders gauge show
   * it); nothing more is written for it until it starts again (a reload, or a restart).
   */
  private stopUnsafe(name: string, err: DocexError): void {
    const { log } = this.options;
    const runtime = this.plan.running.get(name);
    if (!runtime || this.plan.stopped.some((s) => s.name === name)) return;
    this.plan.stopped.push(this.stoppedBy(runtime.config, err));
    this.retire(name).catch((stopErr: unknown) =>
      log.error({ folder: name, err: stopErr }, 'folder failed to stop'),
    );
  }
}
