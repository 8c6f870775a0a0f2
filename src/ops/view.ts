/** What the ops endpoints read of a running agent: the seam between the agent and ops. */

import type { LeaseCounts } from '../agent/leases.js';
import type { Clock } from '../core/clock.js';
import type { JournalLocation } from '../journal/index.js';
import type { UnreadableFile } from '../sources/local/index.js';
import type { PaceCounts, ReturnsCounts } from './metrics.js';
import type {
  FailingOutputView,
  FolderDirs,
  StoppedFolderView,
  Unreachability,
  WindowHeldView,
} from './readiness.js';

/** What the endpoints read of a running agent (agentView builds it from an Agent). */
export interface OpsAgentView {
  clock: Clock;
  journal: JournalLocation;
  /** Resolves when the agent's journal answers a read. */
  pingJournal(): Promise<unknown>;
  folders(): FolderDirs[];
  queueDepth(): number;
  getToken?: (signal: AbortSignal) => Promise<unknown>;
  pingApi?: (signal: AbortSignal) => Promise<unknown>;
  certificatePem?: () => string | undefined;
  /**
   * Where the return path's store is, when it runs (beside the journal: the state folder for a
   * SQLite journal, the journal's database otherwise): proofs archived are counted there.
   */
  returnsStore?: { location: JournalLocation; stateDir: string };
  /** Counts the return path reports itself (Peppol documents, webhook deliveries), when it does. */
  returns?: () => ReturnsCounts;
  /** Configured folders the agent did not start. */
  stoppedFolders?: () => StoppedFolderView[];
  /** Each running local folder with the files in it the agent cannot read, stat or move. */
  unreadableFiles?: () => { folder: string; files: UnreadableFile[] }[];
  /** Output targets whose last write failed. */
  failingOutputs?: () => FailingOutputView[];
  /** Failed writes since start, by output. */
  outputFailures?: () => Record<string, number>;
  /** Files removed by retention since start. */
  retentionRemoved?: () => { folder: string; place: string; files: number }[];
  /** Agents alive on the journal (the running agent's heartbeat store; 1 on SQLite). */
  agentsAlive?: () => Promise<number>;
  /** What the lease part counted since start. */
  leases?: () => LeaseCounts;
  /** Claims of the tasks run once across the agents since start, by task. */
  clusterTasks?: () => ReadonlyMap<string, { ran: number; left: number }>;
  /** How long the service has not answered, and how long that is tolerated. */
  unreachable?: Unreachability;
  /** The pace of the service host: calls it allows in flight now, and those in flight. */
  pace?: () => PaceCounts;
  /** Each folder holding files until its send window opens, with when it opens. */
  heldForWindow?: () => WindowHeldView[];
}
