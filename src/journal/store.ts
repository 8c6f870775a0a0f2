/**
 * The journal's contract: what the pipeline, recovery, housekeeping and the commands ask of the
 * durable record, whichever database keeps it. Two implementations: SqliteJournal (a file in the
 * state folder, the default) and PostgresJournal (a shared server). Both enforce the same rules
 * (states.ts) and pass the same conformance suite (test/journal/); nothing outside src/journal/
 * knows which one runs.
 */
import type { JournalItem } from './schema.js';
import type { ItemState, RecoveryOptions } from './states.js';
import type {
  ClaimInput,
  DoneJobItem,
  FileMatch,
  HistoryEntry,
  HistoryStep,
  JournalStats,
  PendingUpload,
  PruneBatch,
  RecordedClaim,
  RecoveryStep,
  RowInput,
  TransitionFields,
  UnfinishedFile,
  WaitingFiles,
} from './types.js';

/** A failed try of an item, as the retry policy decided it (recorded in the item's row). */
export interface FailedTry {
  /** The failure's stable code. */
  code: string;
  /** When the next try is due (epoch ms, the injected clock's). */
  nextTryAt: number;
}

export interface JournalStore {
  /** Where the journal is, for logs and messages: a file path, or a URL without its password. */
  readonly location: string;

  /** Records a dropped file (or finds it already recorded, or a duplicate of an earlier one). */
  recordClaim(input: ClaimInput): Promise<RecordedClaim>;
  /** Records a validated file's payload rows, all at once, each validated (or rejected). */
  addRows(fileId: number, rows: readonly RowInput[]): Promise<JournalItem[]>;
  /**
   * One legal move in one transaction; an illegal one rejects with DOCEX_JOURNAL_TRANSITION. A move
   * the agent acts on next (isDurableMove) is on disk when this resolves.
   */
  transition(itemId: number, to: ItemState, fields?: TransitionFields): Promise<JournalItem>;
  /** The same move, resolving once it is on disk whatever the move (moves close together share a sync). */
  commitMove(itemId: number, to: ItemState, fields?: TransitionFields): Promise<JournalItem>;
  /** Resolves once every move recorded before the call is on disk. */
  flush(): Promise<void>;

  /** Drops the upload URL (after the upload is confirmed). */
  forgetUploadUrl(itemId: number): Promise<void>;
  /** The pre-signed URL of a created job, for the uploader only. Never log what this returns. */
  revealUploadUrl(itemId: number): Promise<string | undefined>;

  /**
   * A try of the item failed: its count of failed tries in a row grows by one, with the failure's
   * code and when the next try is due. Answers the item as recorded.
   */
  recordFailedTry(itemId: number, failure: FailedTry): Promise<JournalItem>;
  /** The item's try succeeded or made progress: its count of failed tries in a row starts again. */
  clearFailedTries(itemId: number): Promise<void>;

  get(itemId: number): Promise<JournalItem | undefined>;
  byJobId(jobId: string): Promise<JournalItem | undefined>;
  /** File items whose source or claimed path is this path, newest first. */
  byPath(path: string): Promise<JournalItem[]>;
  rowsOf(fileId: number): Promise<JournalItem[]>;
  /** The most recently moved file items. */
  recent(limit?: number): Promise<JournalItem[]>;
  /** Items neither done nor rejected, oldest first: what a restart must resume. */
  unfinished(): Promise<JournalItem[]>;
  /** Every unfinished item with what to do about it now (by the injected clock). */
  recoveryPlan(options?: RecoveryOptions): Promise<RecoveryStep[]>;
  history(itemId: number): Promise<HistoryEntry[]>;
  stats(): Promise<JournalStats>;

  /** The file at `path` is about to be parsed; a record left at the next start is a crash's. */
  inspectionStarting(path: string): Promise<void>;
  inspectionEnded(path: string): Promise<void>;
  /** How many inspections of the file at `path` a crash interrupted (0 when none). */
  interruptedInspections(path: string): Promise<number>;

  /**
   * One batch of pruning: the finished files among ids (afterId, afterId + scanIds] last moved
   * before `cutoffMs`. A done file keeps its own row (duplicate detection reads it); its history
   * and payload rows go. A rejected file goes whole. One short transaction.
   */
  pruneFinished(cutoffMs: number, afterId: number, scanIds: number): Promise<PruneBatch>;

  close(): Promise<void>;
}

/**
 * The journal's read API, for everyone but the intake: the return path's feed of done jobs, the
 * ops totals and upload windows, the blocked-file check, the status command. A reader never
 * migrates, checkpoints or writes, and never reads an upload URL.
 */
export interface JournalReader {
  /** Up to `limit` items that reached `done` with a job after `cursor`, in the order of their `done`. */
  doneJobsAfter(cursor: number, limit: number): Promise<DoneJobItem[]>;
  /** Up to `limit` history entries after the entry `cursor`, oldest first. */
  historyAfter(cursor: number, limit: number): Promise<HistoryStep[]>;
  /** Jobs created whose upload is not confirmed yet, soonest deadline first. */
  pendingUploads(): Promise<PendingUpload[]>;
  /** Files not finished yet, by folder and state. */
  waiting(): Promise<WaitingFiles[]>;
  /** Up to `limit` files claimed at or before `cutoff` and not finished, oldest first. */
  unfinishedSince(cutoff: number, limit: number): Promise<UnfinishedFile[]>;
  /** Ids of the newest `limit` file items by bare name, or by content (and place). */
  fileItemIds(match: FileMatch, limit: number): Promise<number[]>;
  get(itemId: number): Promise<JournalItem | undefined>;
  byJobId(jobId: string): Promise<JournalItem | undefined>;
  byPath(path: string): Promise<JournalItem[]>;
  history(itemId: number): Promise<HistoryEntry[]>;
  close(): Promise<void>;
}
