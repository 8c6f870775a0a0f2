import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JournalItem } from './schema.js';
import type { ItemMode, ItemState, RecoveryAction } from './states.js';

export interface JournalOptions {
  clock: Clock;
  log: Logger;
  /** Longest time a confirmed upload's URL may stay in the WAL (default 1 s; 0: checkpoint at once). */
  scrubDelayMs?: number;
}

export interface ClaimInput {
  folder: string;
  sourcePath: string;
  claimedPath: string;
  fileName: string;
  size: number;
  mtimeMs: number;
  sha256: string;
  workflowId: string;
  mode: ItemMode;
  /** The folder lets the same content through again. */
  allowDuplicates?: boolean;
  /**
   * A single file that already passed its checks (this note, as `validated` records it): it is
   * recorded validated and with its create intent in the claim's own transaction, one commit
   * instead of three. Ignored for a duplicate.
   */
  validatedNote?: string;
}

export type RecordedClaim =
  | { kind: 'claimed'; item: JournalItem }
  /**
   * This very file (same folder, path and content) is recorded as claimed but not yet validated: a
   * crash may have come before it was moved to its claimed path, so resume it. Once an item is past
   * `claimed` its file has been moved, and the same content at the source path is a new drop.
   */
  | { kind: 'in-progress'; item: JournalItem }
  /** The content was seen before for this folder or workflow: `item` records this drop as rejected. */
  | { kind: 'duplicate'; earlier: JournalItem; item: JournalItem };

export interface RowInput {
  rowIndex: number;
  /** A readable, non-secret handle for status output (e.g. the ERP's document number). */
  label?: string;
  payloadSha256?: string;
  /** The row failed the local payload rules: it is recorded rejected and never sent. */
  rejected?: { code: string; reason: string };
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
  code?: string;
  reason?: string;
  /** A short note for the history (e.g. "job found by name"); URL queries are stripped. */
  note?: string;
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

/** What one batch of pruning did (see PrunableJournal). */
export interface PruneBatch {
  /** Finished file items pruned: a done one keeps a slim row, a rejected one goes whole. */
  items: number;
  /** Payload rows removed (with their history). */
  rows: number;
  history: number;
  /** The item id to scan after next; undefined once the scan passed the last item. */
  next: number | undefined;
}

/**
 * Pruning of finished items, for housekeeping; part of the journal's interface so any backend
 * implements it (Journal, SQLite, does). Each call is one short transaction over a bounded range
 * of item ids, so a caller can yield to the event loop between calls (pruneJournal does).
 *
 * What must stay: one row per `done` file with its folder, workflow id and SHA-256 (and file name
 * and job id for the refusal's message), because duplicate detection looks the content up there
 * forever (the claim's earlierContent). What may go once the item was last moved before the
 * cutoff: its history entries, its payload rows and theirs (their jobs were followed long ago),
 * and a rejected file whole (a rejected drop never makes a later one a duplicate).
 */
export interface PrunableJournal {
  pruneFinished(cutoffMs: number, afterId: number, scanIds: number): PruneBatch;
}
