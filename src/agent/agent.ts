/**
 * The agent's controller, composed of parts (the zigbee2mqtt controller's shape): built from one
 * options object, started in order (state lock, journal, cluster heartbeat, service connection with
 * the built-in sandbox, inspector, unreadable-file report, folders with the pipeline and its
 * recovery, leases, blocked-file report, return path, inbound part, housekeeping, reload) and
 * stopped in reverse, gathering failures instead of stopping at the first. A start that fails
 * stops what had started.
 */
import path from 'node:path';
import { HostPace } from '../api/host-pace.js';
import type { ApiObserver, DocexClient } from '../api/index.js';
import { Pacing } from '../api/pacing.js';
import { type AgentConfig, journalLocationOf } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import {
  type AgentIdentity,
  acquireJournalLock,
  agentIdentity,
  type ClusterStore,
  DEFAULT_UPLOAD_MARGIN_MS,
  type JournalLocation,
  type JournalStore,
  openJournal,
} from '../journal/index.js';
import { OutputHealth } from '../outputs/health.js';
import { Inspector } from '../pipeline/isolate/inspector.js';
import type { Pipeline, RecoverySummary } from '../pipeline/pipeline.js';
import type { FolderRuntime, PipelineJobs } from '../pipeline/types.js';
import type { Inbound } from '../returns/inbound.js';
import type { FollowClient, Returns } from '../returns/index.js';
import type { SourceTiming } from '../sources/folder-source.js';
import type { SharedClaims } from '../sources/sftp/source.js';
import { BlockedFiles } from './blocked-files.js';
import { liveCompanies } from './company-of.js';
import { openConnection, type SandboxService } from './connection.js';
import type { FolderPlan, StoppedFolder, WorkflowFetch } from './folders.js';
import { ClusterPart } from './heartbeat.js';
import {
  Housekeeping,
  journalRetentionPlace,
  outputRetentionPlaces,
  type RetentionPlace,
} from './housekeeping.js';
import { LeasePart } from './leases.js';
import { Opened, type Part, type PartFailure, startParts, stopParts } from './parts.js';
import { ConfigReloader, type ReloadResult } from './reload.js';
import { FollowerPart, InboundPart, returnPathOutputs } from './return-path.js';
import { type FolderUnreadable, RunningFolders } from './running-folders.js';
import { sftpClaims } from './sftp-claims.js';
import { sharedWriting } from './shared-writing.js';
import { UnreadableReport } from './unreadable-report.js';

export interface AgentOptions {
  config: AgentConfig;
  log: Logger;
  /** The configuration file: reload() reads it again (SIGHUP). Without it the agent has no reload. */
  configFile?: string;
  clock?: Clock;
  /** Source timing (tests use short ones). */
  source?: SourceTiming;
  uploadMarginMs?: number;
  retryDelayMs?: (n: number) => number;
  /** Files driven to their end between two full GCs (tests: fewer; pipeline.ts COLLECT_EVERY_FILES). */
  collectEveryFiles?: number;
  /** How often a folder holding files for its send window looks at the clock again (tests: short). */
  windowRecheckMs?: number;
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
  /** Who this agent is on a shared journal (default: a fresh id, this host and pid, the state folder). */
  identity?: AgentIdentity;
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

export interface StopReport {
  failures: PartFailure[];
  drained: boolean;
}

interface Connection {
  client: DocexClient;
  /** The built-in sandbox, when sandbox.enabled and the command line handed in its starter. */
  sandbox: SandboxService | undefined;
}

/** The one place the service connection opens: the configured one, or the built-in sandbox's. */
function connectionPart(options: AgentOptions): Opened<Connection> {
  const open = async (): Promise<Connection> => {
    const { config, log, clock, apiObserver, startSandbox } = options;
    const sandbox = config.sandbox.enabled && startSandbox ? await startSandbox() : undefined;
    try {
      return { client: openConnection(config, log, clock, apiObserver, sandbox?.clientOptions), sandbox };
    } catch (err) {
      await sandbox?.stop();
      throw err;
    }
  };
  return new Opened('connection', open, async ({ client, sandbox }) => {
    try {
      await client.close();
    } finally {
      await sandbox?.stop();
    }
  });
}

export class Agent {
  /** Which output targets (statuses, proofs, Peppol inbox) fail to be written, and how often they did. */
  readonly outputHealth: OutputHealth;
  /** Retention of the archive and error folders, the outputs and the journal. */
  readonly housekeeping: Housekeeping;
  private readonly log: Logger;
  private readonly parts: Part[];
  private started: Part[] = [];
  private stopping = false;
  private mustStopNow: (reason: DocexError) => void = () => {};
  /**
   * Resolves when the agent must stop by itself (its caller stops it, as for a signal, and exits
   * non-zero): a newer agent migrated the journal past this agent's version.
   */
  readonly mustStop = new Promise<DocexError>((resolve) => {
    this.mustStopNow = resolve;
  });
  private readonly journalPart: Opened<JournalStore>;
  /** Heartbeats and once-across-the-agents task claims (alone on a SQLite journal). */
  private readonly clusterPart: ClusterPart;
  /** SFTP claim folders, once the cluster part tells the journal is shared. */
  private claims: SharedClaims | undefined;
  /** The leases of the files this agent holds, and takeovers (PostgreSQL journal only). */
  readonly leases: LeasePart;
  /** Where the journal is (the SQLite file in the state folder, or the PostgreSQL database). */
  readonly journalLocation: JournalLocation;
  /** Absent when the options bring a client. */
  private readonly connection: Opened<Connection> | undefined;
  private readonly folders: RunningFolders;
  /** `<stateDir>/unreadable-files.json`, for `docex-agent status`. */
  private readonly unreadableReport: UnreadableReport;
  private readonly follower: FollowerPart;
  /** The pace of every call to the service host (metrics read its concurrency). */
  readonly pace: HostPace;
  private readonly inboundPart: InboundPart;
  private readonly reloader: Opened<ConfigReloader> | undefined;
  /** Each folder's workflow, at start and at a reload. */
  private readonly fetchWorkflow: WorkflowFetch = (id, managedCompanyId) =>
    this.client.workflows.get(id, managedCompanyId ? { managedCompanyId } : undefined);

  constructor(private readonly options: AgentOptions) {
    const { config, log } = options;
    const clock = options.clock ?? systemClock;
    const journal = journalLocationOf(config);
    this.journalLocation = journal;
    this.log = log;
    const lock = new Opened(
      'lock',
      () => acquireJournalLock(config.stateDir),
      (held) => held.release(),
    );
    const identity = options.identity ?? agentIdentity(path.resolve(config.stateDir));
    const { cluster } = config;
    const lease = {
      agentId: identity.id,
      place: identity.place,
      leaseMs: cluster.leaseMs,
      sendMarginMs: cluster.createMarginMs,
    };
    this.journalPart = new Opened(
      'journal',
      () => openJournal(journal, { clock, log, deadAfterMs: cluster.deadAfterMs, lease, agent: identity }),
      (j) => j.close(),
    );
    this.clusterPart = new ClusterPart({
      location: journal,
      config: cluster,
      log,
      identity,
      onNewerSchema: (err) => this.mustStopNow(err),
    });
    // One pace for every call to the service host: the intake's and the return path's.
    this.pace = new HostPace(
      clock,
      new Pacing({ concurrency: config.pace.concurrency, rate: config.pace.rate }),
      log.child({ part: 'pace' }),
      { maxSleepMs: options.returns?.maxSleepMs, observer: options.apiObserver },
    );
    this.connection = options.client ? undefined : connectionPart(options);
    const inspector = options.inspector
      ? undefined
      : new Opened(
          'inspector',
          () => new Inspector(config.inspection, log),
          (own) => own.close(),
        );
    this.folders = new RunningFolders({
      config,
      clock,
      log,
      journal: () => this.journal,
      jobs: () => this.client.jobs,
      inspector: () => options.inspector ?? inspector!.value,
      fetchWorkflow: this.fetchWorkflow,
      timing: options.source ?? {},
      uploadMarginMs: options.uploadMarginMs ?? DEFAULT_UPLOAD_MARGIN_MS,
      retryDelayMs: options.retryDelayMs,
      collectEveryFiles: options.collectEveryFiles,
      windowRecheckMs: options.windowRecheckMs,
      stopping: () => this.stopping,
      sftpClaims: () => {
        const store = this.clusterPart.cluster;
        if (!store.shared) return undefined;
        this.claims ??= sftpClaims(identity.place, () => store.agents());
        return this.claims;
      },
      onTakenOver: (files) => {
        this.leases.counts.takenOver += files;
      },
      onUnreadableChange: () => this.unreadableReport.changed(),
      // Same process: the follower reads the journal at once rather than at its safety timer.
      onJobDone: () => this.follower.returns?.follower.jobsDone(),
      pace: this.pace,
    });
    this.unreadableReport = new UnreadableReport({
      stateDir: config.stateDir,
      files: () => this.unreadableFiles().flatMap((f) => f.files),
      clock,
      log,
    });
    this.leases = new LeasePart({
      location: journal,
      config: cluster,
      log,
      journal: () => this.journal,
      pipeline: () => this.pipeline,
      takenOverAtStart: () => this.recovery.takenOver,
    });
    const blocked = new BlockedFiles({ journal, clock, log });
    this.outputHealth = new OutputHealth(clock);
    const returnPath = {
      config,
      clock,
      log,
      journal,
      outputHealth: this.outputHealth,
      client: () => this.client,
      // Read live: a folder added by a reload brings its own managed company.
      companies: () => liveCompanies(this.plan, config.folders),
      maxSleepMs: options.returns?.maxSleepMs,
      claimTask: this.clusterPart.claim,
      pace: this.pace,
      sharedWriting:
        journal.kind === 'postgres'
          ? sharedWriting(identity, () => this.clusterPart.cluster.agents())
          : undefined,
    };
    this.follower = new FollowerPart(returnPath);
    this.inboundPart = new InboundPart(returnPath, this.follower);
    // Started after the outputs, so stopped before they close.
    this.housekeeping = new Housekeeping({
      places: () => this.retentionPlaces(),
      clock,
      log,
      claim: this.clusterPart.claim,
    });
    const configFile = options.configFile;
    this.reloader = configFile
      ? new Opened(
          'reload',
          () =>
            new ConfigReloader({ configFile, config, target: this, fetchWorkflow: this.fetchWorkflow, log }),
          // Nothing to undo: a reload that ends after stop() began starts no folder (addFolder).
          () => {},
        )
      : undefined;
    this.parts = [
      lock,
      this.journalPart,
      this.clusterPart,
      ...(this.connection ? [this.connection] : []),
      ...(inspector ? [inspector] : []),
      {
        name: 'unreadable-report',
        start: () => this.unreadableReport.start(),
        stop: () => this.unreadableReport.stop(),
      },
      this.folders,
      this.leases,
      { name: 'blocked-files', start: () => blocked.start(), stop: () => blocked.stop() },
      this.follower,
      this.inboundPart,
      { name: 'housekeeping', start: () => this.housekeeping.start(), stop: () => this.housekeeping.stop() },
      ...(this.reloader ? [this.reloader] : []),
    ];
  }

  /** A started agent. */
  static async start(options: AgentOptions): Promise<Agent> {
    const agent = new Agent(options);
    await agent.start();
    return agent;
  }

  async start(): Promise<void> {
    this.started = await startParts(this.parts, this.log);
    const plan = this.plan;
    this.log.info(
      { folders: [...plan.running.keys()], stopped: plan.stopped.map((s) => s.name), ...this.recovery },
      'agent started',
    );
  }

  /** Stops intake first, then lets in-flight work finish (up to shutdownGraceMs), then the rest. */
  async stop(): Promise<StopReport> {
    this.stopping = true;
    const failures = await stopParts(this.started, this.log);
    const drained = this.folders.drained;
    this.log.info({ drained, failures: failures.length }, 'agent stopped');
    return { failures, drained };
  }

  get journal(): JournalStore {
    return this.journalPart.value;
  }

  /** The agents sharing the journal (this one alone on SQLite). */
  get cluster(): ClusterStore {
    return this.clusterPart.cluster;
  }

  /** Claims of the tasks run once across the agents since start (metrics). */
  get clusterTasks(): ReadonlyMap<string, { ran: number; left: number }> {
    return this.clusterPart.taskClaims;
  }

  get client(): AgentClient {
    return this.options.client ?? this.connection!.value.client;
  }

  /** The built-in sandbox when sandbox.enabled and the agent opened its own connection. */
  get sandbox(): SandboxService | undefined {
    return this.connection?.value.sandbox;
  }

  get pipeline(): Pipeline {
    return this.folders.pipeline;
  }

  get plan(): FolderPlan {
    return this.folders.plan;
  }

  get recovery(): RecoverySummary {
    return this.folders.recovery;
  }

  get stoppedFolders(): StoppedFolder[] {
    return this.plan.stopped;
  }

  /** Each running local folder with the files in it the agent cannot read, stat or move. */
  unreadableFiles(): FolderUnreadable[] {
    return this.folders.unreadableFiles();
  }

  /** The job follower (webhooks nudge it); undefined when returns.enabled is false. */
  get returns(): Returns | undefined {
    return this.follower.returns;
  }

  /** The Peppol inbox and webhook receiver; undefined when both are off. */
  get inbound(): Inbound | undefined {
    return this.inboundPart.inbound;
  }

  /** Read live: a reload may change the folders. */
  private retentionPlaces(): RetentionPlace[] {
    return [
      ...this.folders.retentionPlaces(),
      ...outputRetentionPlaces(returnPathOutputs(this.follower, this.inboundPart)),
      // A configuration built without the schema (tests) has no journal section.
      ...journalRetentionPlace(this.journal, this.options.config.journal?.retention),
    ];
  }

  /** Reads the configuration file again and applies its folders (SIGHUP); needs options.configFile. */
  reload(): Promise<ReloadResult> {
    if (!this.reloader) {
      return Promise.reject(
        new DocexError('DOCEX_INTERNAL', 'the agent was started without a configuration file'),
      );
    }
    return this.reloader.value.reload();
  }

  /** Starts a folder at run time (a reload); `at` is its key in the configuration read (`folders[2]`). */
  addFolder(runtime: FolderRuntime, at: string): Promise<void> {
    return this.folders.add(runtime, at);
  }

  /** Stops a folder at run time (a reload): no new files are taken; files in flight finish first. */
  removeFolder(name: string): Promise<void> {
    return this.folders.remove(name);
  }
}
