/**
 * The operations part of `docex-agent start`: the listener comes up first (so /healthz answers
 * and /readyz says "starting" while the agent starts), the agent is attached once it runs.
 */
import { statSync } from 'node:fs';
import type { OpsConfig } from '../config/ops-schema.js';
import type { Logger } from '../core/logger.js';
import { type JournalLocation, journalFiles } from '../journal/index.js';
import { openReturnsReader } from '../returns/open-stores.js';
import type { ReturnsReader } from '../returns/store-reader.js';
import { type OpsServer, startOpsServer } from './http-server.js';
import { JournalReader } from './journal-reader.js';
import type { AgentMetrics } from './metrics.js';
import {
  apiCheck,
  foldersCheck,
  journalCheck,
  outputsCheck,
  type ReadinessCheck,
  runChecks,
  sendWindowsCheck,
  stoppedFoldersCheck,
  tokenCheck,
  toleratingOutage,
  unreadableFilesCheck,
  uploadWindowCheck,
} from './readiness.js';
import type { OpsAgentView } from './view.js';

export { agentView } from './agent-view.js';
export { AgentMetrics } from './metrics.js';
export { lateUploads, runChecks } from './readiness.js';
export type { OpsAgentView } from './view.js';

export interface RunningOps {
  url: string;
  port: number;
  /** Starts answering /readyz and the pulled metrics from this agent. */
  attach(view: OpsAgentView): void;
  stop(): Promise<void>;
}

export interface StartOpsOptions {
  config: OpsConfig;
  log: Logger;
  metrics?: AgentMetrics;
  /** Limit of each readiness check. */
  checkTimeoutMs?: number;
}

/** Size of a file, 0 when it does not exist (a WAL after a checkpoint). */
function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The journal's size on this host's disk; none when a database server keeps it. */
function journalBytes(location: JournalLocation): { journalBytes?: () => number } {
  const files = journalFiles(location);
  if (files.length === 0) return {};
  return { journalBytes: () => files.reduce((sum, file) => sum + fileBytes(file), 0) };
}

function checksFor(view: OpsAgentView, reader: JournalReader): ReadinessCheck[] {
  const checks: ReadinessCheck[] = [];
  const service = (check: ReadinessCheck) =>
    view.unreachable ? toleratingOutage(check, view.unreachable) : check;
  if (view.getToken) checks.push(service(tokenCheck(view.getToken)));
  if (view.pingApi) checks.push(service(apiCheck(view.pingApi)));
  checks.push(foldersCheck(view.folders));
  if (view.stoppedFolders) checks.push(stoppedFoldersCheck(view.stoppedFolders));
  if (view.unreadableFiles) {
    const list = view.unreadableFiles;
    checks.push(unreadableFilesCheck(() => list().flatMap((f) => f.files)));
  }
  if (view.heldForWindow) checks.push(sendWindowsCheck(view.heldForWindow));
  if (view.failingOutputs) checks.push(outputsCheck(view.failingOutputs, view.clock));
  checks.push(journalCheck(view.journal, view.pingJournal));
  checks.push(uploadWindowCheck(() => reader.pendingUploads(), view.clock));
  return checks;
}

export async function startOps(options: StartOpsOptions): Promise<RunningOps> {
  const { config, log, metrics } = options;
  let checks: ReadinessCheck[] | undefined;
  let reader: JournalReader | undefined;
  let returnsReader: ReturnsReader | undefined;
  const server: OpsServer = await startOpsServer(
    config.listen,
    {
      readiness: async () => (checks ? runChecks(checks, options.checkTimeoutMs) : undefined),
      ...(metrics && config.metrics ? { metrics: () => metrics.render() } : {}),
    },
    log,
  );
  log.info({ address: server.url }, 'ops endpoints listening');
  return {
    url: server.url,
    port: server.port,
    attach(view) {
      void reader?.close();
      void returnsReader?.close();
      const proofs = view.returnsStore
        ? openReturnsReader(view.returnsStore.location, view.returnsStore.stateDir, { busyTimeoutMs: 2000 })
        : undefined;
      returnsReader = proofs;
      const journal = new JournalReader(view.journal);
      reader = journal;
      checks = checksFor(view, journal);
      metrics?.attach({
        clock: view.clock,
        journal: () => journal.counts(),
        pendingUploads: () => journal.pendingUploads(),
        queueDepth: view.queueDepth,
        waiting: () => journal.waiting(),
        ...journalBytes(view.journal),
        ...(view.stoppedFolders ? { stoppedFolders: () => view.stoppedFolders!().length } : {}),
        ...(view.unreadableFiles
          ? {
              unreadableFiles: () =>
                view.unreadableFiles!().map(({ folder, files }) => ({ folder, count: files.length })),
            }
          : {}),
        ...(view.heldForWindow
          ? {
              heldForWindow: () =>
                view.heldForWindow!().map(({ folder, files }) => ({ folder, count: files })),
            }
          : {}),
        ...(view.outputFailures ? { outputFailures: view.outputFailures } : {}),
        ...(view.retentionRemoved ? { retentionRemoved: view.retentionRemoved } : {}),
        ...(view.agentsAlive ? { agentsAlive: view.agentsAlive } : {}),
        ...(view.leases ? { leases: view.leases } : {}),
        ...(view.clusterTasks ? { clusterTasks: view.clusterTasks } : {}),
        ...(view.pace ? { pace: view.pace } : {}),
        ...(view.certificatePem ? { certificatePem: view.certificatePem } : {}),
        ...(proofs || view.returns
          ? {
              returns: async () => {
                const proofsArchived = await proofs?.proofsArchived();
                return {
                  ...view.returns?.(),
                  ...(proofsArchived === undefined ? {} : { proofsArchived }),
                };
              },
            }
          : {}),
      });
    },
    async stop() {
      await server.close();
      await reader?.close();
      reader = undefined;
      await returnsReader?.close();
      returnsReader = undefined;
      checks = undefined;
    },
  };
}
