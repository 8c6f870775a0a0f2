import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/error-codes.js';
import type { Logger } from '../core/logger.js';
import type { AgentIdentity } from './cluster.js';
import type { JournalItem } from './schema.js';
import type { ItemMode, ItemState, RecoveryAction } from './states.js';

export interface JournalOptions {
  clock: Clock;
  log: Logger;
  /** Longest time a confirmed upload's URL may stay in the WAL (default 1 s; 0: checkpoint at once). */
  scrubDelayMs?: number;
  /**
   * PostgreSQL: cluster.deadAfterMs, for the rolling-upgrade guard of the migrations (an older
   * agent heard from within it blocks a migration that is not additive). Absent: every agent not
   * marked stopped counts as alive.
   */
  deadAfterMs?: number | undefined;
  /**
   * PostgreSQL, an agent (not a tool): files are held by leases and every write for a file is
   * fenced by the epoch it was taken with (docs/high-availability.md). Absent: no leases.
   */
  lease?: LeaseOptions | undefined;
  /**
   * PostgreSQL, an agent (not a tool): who it is. Its row in the agents table is written in the
   * transaction that checks the schema (the rolling-upgrade guard sees it from then on, before
   * its first heartbeat). SQLite: unused.
   */
  agent?: AgentIdentity | undefined;
}

export interface LeaseOptions {
  /** This agent's id for this start (AgentIdentity.id). */
  agentId: string;
  /** Host and state folder (AgentIdentity.place): an earlier start's files are taken back at once. */
  place: string;
  /** cluster.leaseMs */
  leaseMs: number;
  /** cluster.createMarginMs: a create must end this long before the lease could run out. */
  sendMarginMs: number;
  /** This host's monotonic clock in ms (default performance.now), which times each lease. */
  monotonicNow?: () => number;
}

export interface ClaimInput {
  folder: string;
  sourcePath: string;
  /** Its path relative to the drop folder (`acme/invoices/x.pdf`): kept whatever the folder's path becomes. */
  relativePath?: string | undefined;
  claimedPath: string;
  fileName: string;
  size: number;
  mtimeMs: number;
  sha256: string;
  workflowId: string;
  /** The managed company it is sent as (a route's); absent: the folder's own at each call. */
  managedCompanyId?: string | undefined;
  /**
   * Refused before any check of its content (no route of the folder takes it): recorded rejected
   * in the claim's own transaction, so no restart can drive it on. A duplicate is still a duplicate.
   */
  refused?: { code: ErrorCode; reason: string };
  mode: ItemMode;
  /** The folder lets the same content through again. */
  allowDuplicates?: boolean;
  /**
   * A single file that already passed its checks (this note, as `validated` records it): it is
   * recorded validated and with its create intent in the claim's own transaction, one commit
   * instead of three. Ignored for a duplicate.
   */
  validatedNote?: string;
  /**
   * The claimed path is a local copy of a remote file (an SFTP folder's spool), whose identity is
   * its source URL, size and mtime: see RecordedClaim's `same-drop`.
   */
  remote?: boolean;
  /**
   * With leases: whether the file is still at its claimed path. Asked when the content was sent
   * before from this very claimed path, size and mtime: gone means another agent took this same
   * file as an orphan and finished it (the claim is answered `same-drop`), there means a new drop
   * of the same file (a duplicate, as always).
   */
  stillThere?: () => Promise<boolean>;
  /**
   * The path of an inspection of this file that ended before the claim (inspectionStarting): its
   * record is cleared in the claim's transaction, not by a commit of its own.
   */
  inspectedPath?: string;
}

export type RecordedClaim =
  | { kind: 'claimed'; item: JournalItem }
  /**
   * This very file (same folder, path and content) is recorded as claimed but not yet validated: a
   * crash may have come before it was moved to its claimed path, so resume it. Once an item is past
   * `claimed` its file has been moved, and the same content at the source path is a new drop. With
   * leases (PostgreSQL, several agents) also an unfinished item at the same claimed path: another
   * agent on a shared folder recorded the file first, and may hold it (JournalStore.holds).
   */
  | { kind: 'in-progress'; item: JournalItem }
  /**
   * With leases, a copy of a remote file (ClaimInput.remote): this very drop (same folder, source
   * URL, content, size and mtime to the second) is recorded already, as `item`, final or not. A
   * second copy of it exists when an agent took over the remote file of one that died (or froze)
   * before or after recording it: the item is taken over with this copy (takeOverCopy), or, final,
   * left as it is. Also a file of a shared folder recorded late (ClaimInput.stillThere), after
   * another agent took it as an orphan and finished it: `item` is that agent's, final.
   */
  | { kind: 'same-drop'; item: JournalItem }
  /**
   * The content was seen before for this folder or workflow, as the same managed company (two
   * companies' same bytes are two senders' documents): `item` records this drop as rejected.
   */
  | { kind: 'duplicate'; earlier: JournalItem; item: JournalItem };

export interface RowInput {
  rowIndex: number;
  /** A readable, non-secret handle for status output (e.g. the ERP's document number). */
  label?: string;
  payloadSha256?: string;
  /** The row failed the local payload rules: it is recorded rejected and never sent. */
  rejected?: { code: ErrorCode; reason: string };
}

/** Fields a move records; which are required depends on the target state. */
export interface TransitionFields {
  /** `created`: the job's id. */
  jobId?: string;
  /** `created`, jobs with an upload step: the pre-signed URL (kept until the upload is confirmed). */
  uploadUrl?: string;
  /** `created`, jobs with an upload step: epoch ms after which the URL no longer works. */
  uploadDeadline?: number;
  /** `uploaded`: the MD5 the files host confirmed. */
  md5?: string;
  /** `rejected`: a stable DOCEX_ code and a message for the ERP. */
  code?: ErrorCode;
  reason?: string;
  /** A short note for the history (e.g. "job found by name"); URL queries are stripped. */
  note?: string;
  /**
   * The create's answer was lost and its job found by name: counted on the item in the move's own
   * transaction. `orphan`: the job cannot be used (no upload URL) and this move is the new attempt;
   * `kept`: the job found is the item's (this move records it).
   */
  lostAnswer?: 'orphan' | 'kept';
}

export interface HistoryEntry {
  itemId: number;
  from: ItemState | undefined;
  to: ItemState;
  at: number;
  detail: Record<string, unknown> | undefined;
}

export interface JournalStats {
  files: Record<ItemState, number>;
  rows: Record<ItemState, number>;
  unfinished: number;
}

export interface RecoveryStep {
  item: JournalItem;
  action: RecoveryAction;
}

/** An item that reached `done` with a job: a file that is its own job, or one payload row of a file. */
export interface DoneJobItem {
  /** The history entry's id: the feed's cursor. */
  cursor: number;
  itemId: number;
  rowIndex: number | undefined;
  label: string | undefined;
  jobId: string;
  jobName: string | undefined;
  doneAt: number;
  /** The dropped file the job came from (the item itself, or the row's file). */
  source: {
    itemId: number;
    folder: string;
    fileName: string;
    /** Where it was dropped (the sub-path of a file recorded before relativePath was kept is read from it). */
    sourcePath?: string | undefined;
    /** Its path relative to its drop folder, recorded at its claim (undefined: an earlier agent's). */
    relativePath?: string | undefined;
    sha256: string;
    claimedAt: number;
  };
}

/** One history entry with what its item is: the ops totals are summed from these. */
export interface HistoryStep {
  id: number;
  from: string | undefined;
  to: string;
  kind: string;
  folder: string;
  /** As recorded by a rejected move (JournalItem.rejectCode). */
  rejectCode: ErrorCode | undefined;
}

/** History entries counted by what the ops totals tell apart (JournalReader.historyTally). */
export interface HistoryTally {
  folder: string;
  kind: string;
  from: string | undefined;
  to: string;
  /** As recorded by a rejected move (JournalItem.rejectCode). */
  rejectCode: ErrorCode | undefined;
  entries: number;
}

export interface PendingUpload {
  itemId: number;
  folder: string;
  fileName: string;
  /** When the job was created (the window opened), epoch ms. */
  openedAt: number;
  /** When its upload URL stops working, epoch ms. */
  deadline: number;
  /** The agent holding its file (several agents on one PostgreSQL journal). */
  owner?: string | undefined;
}

/** Files claimed and not finished (done or rejected) yet, by folder and state. */
export interface WaitingFiles {
  folder: string;
  state: string;
  count: number;
  /** Claim time of the oldest of them, epoch ms. */
  oldestAt: number;
}

/** A file claimed before a cutoff and not finished. */
export interface UnfinishedFile {
  id: number;
  folder: string;
  fileName: string;
  state: string;
  claimedAt: number;
  jobId: string | undefined;
  /** The agent holding it (several agents on one PostgreSQL journal). */
  owner?: string | undefined;
}

/** A file item by its bare name, or by its content (and, when known, where it was placed). */
export type FileMatch =
  | { fileName: string }
  | { sha256: string; placed?: { folder: string; fileName: string } };

/** What one batch of pruning did (JournalStore.pruneFinished). */
export interface PruneBatch {
  /** Finished file items pruned: a done one keeps a slim row, a rejected one goes whole. */
  items: number;
  /** Payload rows removed (with their history). */
  rows: number;
  history: number;
  /** The item id to scan after next; undefined once the scan passed the last item. */
  next: number | undefined;
}
