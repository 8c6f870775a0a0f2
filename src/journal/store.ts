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
  HistoryTally,
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
  /**
   * Whether it adds one to the count of failed tries (default true). False for a wait that is no
   * failure (a send window's hold): the code and the next try are recorded, the count stays.
   */
  counted?: boolean;
}

/** A file this agent held and lost: another agent took it over (its epoch moved on). */
export interface LostLease {
  itemId: number;
  /** The agent holding it now (undefined: none, the file was released or finished). */
  owner: string | undefined;
}

/** Whose files an agent may take: those of the folders it runs, across agents only where shared. */
export interface TakeOverScope {
  /** Folders this agent runs: their unowned files, and its previous start's, are taken. */
  folders: readonly string[];
  /**
   * Of those, folders whose claimed files every agent reaches (a local folder on a shared file
   * system): files whose lease ran out are taken from whichever agent held them.
   */
  sharedFolders: readonly string[];
}

/** A file taken over from another agent (or from this agent's previous start), with what to do now. */
export interface TakenOver extends RecoveryStep {
  previousOwner: string | undefined;
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
  /**
   * Resolves once every move recorded before the call is on disk; on PostgreSQL a `done`, which
   * nothing acts on (isDurableMove), with the next durable commit.
   */
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
  /**
   * Every unfinished item with what to do about it now (by the injected clock). With leases: the
   * files of `scope` this agent takes over now (takeOverFiles), and their rows.
   */
  recoveryPlan(options?: RecoveryOptions & { scope?: TakeOverScope }): Promise<RecoveryStep[]>;
  history(itemId: number): Promise<HistoryEntry[]>;
  stats(): Promise<JournalStats>;

  /** The file at `path` is about to be parsed; a record left at the next start is a crash's. */
  inspectionStarting(path: string): Promise<void>;
  inspectionEnded(path: string): Promise<void>;
  /**
   * How many inspections of the file at `path` a crash interrupted (0 when none). `startedBefore`
   * (epoch ms): a record started later is not counted (it may be a live agent's inspection).
   */
  interruptedInspections(path: string, startedBefore?: number): Promise<number>;

  /**
   * One batch of pruning: the finished files among ids (afterId, afterId + scanIds] last moved
   * before `cutoffMs`. A done file keeps its own row (duplicate detection reads it); its history
   * and payload rows go. A rejected file goes whole. One short transaction.
   */
  pruneFinished(cutoffMs: number, afterId: number, scanIds: number): Promise<PruneBatch>;

  /**
   * Leases (several agents on one PostgreSQL journal, docs/high-availability.md). Whether this agent
   * holds the file: it claimed or took it over and no other agent took it since. Always true on
   * SQLite, where the agent is alone. Every write for a file this agent does not hold rejects with
   * DOCEX_LEASE_LOST and changes nothing.
   */
  holds(fileId: number): boolean;
  /** Extends the lease of every file this agent holds (one statement); answers those it lost. */
  renewLeases(): Promise<LeaseRenewal>;
  /**
   * Takes over up to `limit` unfinished files of `scope` that no agent holds, that this agent's
   * previous start held, or (shared folders) whose lease ran out by the database's clock, and
   * answers what to do with each. Files another agent is taking at the same moment are skipped,
   * never waited for. [] on SQLite.
   */
  takeOverFiles(scope: TakeOverScope, options?: RecoveryOptions & { limit?: number }): Promise<TakenOver[]>;
  /**
   * A remote file's unfinished item (recordClaim answered `same-drop`) taken over with this agent's
   * copy at `claimedPath`, when no live agent holds it: nobody does, its lease ran out, or this
   * agent's previous start held it. Answers what to do with it; [] when another agent holds it
   * (and on SQLite).
   */
  takeOverCopy(fileId: number, claimedPath: string, options?: RecoveryOptions): Promise<TakenOver[]>;
  /**
   * Right before an irreversible create for the item (a file or a payload row): renews its file's
   * lease and answers how long the request may take (ms), so that it ends before the lease could
   * run out; undefined on SQLite (no bound). Rejects with DOCEX_LEASE_LOST when this agent no
   * longer holds the file.
   */
  leaseForSend(item: Pick<JournalItem, 'id' | 'parentId'>): Promise<number | undefined>;

  /**
   * Runs `place` (this agent's own copy of the item's file moved into the archive or error folder)
   * while no other agent on the journal places a copy of the same file, and only while this agent
   * still holds it: an agent frozen mid-placement keeps the one that took the file over waiting
   * until its copy is placed, and one that lost the file before places nothing (DOCEX_LEASE_LOST).
   * A final file (refused, rejected) is no longer held: it is placed while still this agent's by
   * the item's epoch, or an earlier start's of this agent (same place). Rejects with DOCEX_PLACEMENT_BUSY while another agent places it. On SQLite:
   * runs `place`.
   */
  placeAlone<T>(item: Pick<JournalItem, 'id' | 'parentId' | 'epoch'>, place: () => Promise<T>): Promise<T>;

  close(): Promise<void>;
}

/** What renewLeases did. */
export interface LeaseRenewal {
  /** Files whose lease was extended. */
  renewed: number;
  lost: LostLease[];
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
  /**
   * The history entries after the entry `cursor` up to `cursor + span` (by id), counted in the
   * journal by folder, item kind, move and refusal code, and the last id counted (`cursor` when
   * nothing newer is there). A year of history summed without an object per entry.
   */
  historyTally(cursor: number, span: number): Promise<{ upTo: number; tallies: HistoryTally[] }>;
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
