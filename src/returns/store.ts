/**
 * The return path's store, whichever database keeps it: which jobs are followed and when they are
 * polled next, the last seen state of every sending event, each document to fetch and whether it
 * is written, and which daily CSV files exist. Two implementations: SqliteReturnsStore
 * (`<stateDir>/returns.sqlite`, the default) and PostgresReturnsStore (the journal's database).
 * Both pass the same conformance suite (test/returns/store-conformance.test.ts); only
 * open-stores.ts names them. Every method that writes more than one row does so in one
 * transaction: a crash leaves either the old or the new state, never half.
 */
import type {
  DocumentRow,
  EventRow,
  JobRow,
  NewDocument,
  NewJob,
  PolledEvent,
  PollRecord,
  SourceRow,
} from './store-rows.js';

export type {
  DocumentRow,
  EventRow,
  JobRow,
  NewDocument,
  NewJob,
  PolledEvent,
  PollRecord,
  SourceRow,
} from './store-rows.js';

/** The SQLite store's file name in the state folder. */
export const RETURNS_FILE = 'returns.sqlite';

/**
 * The meta key of a request that every unfinished job be polled soon (a webhook whose job could not
 * be found before its answer): the follower reads it and runs pollUnfinishedWithin, which removes it.
 */
export const POLL_UNFINISHED_KEY = 'poll-unfinished-requested';

/** An event with its job, its source file and its documents: one row of a daily CSV. */
export interface FinalEventEntry {
  event: EventRow;
  job: JobRow;
  source: SourceRow;
  documents: DocumentRow[];
}

/** An event with its documents: one element of a status file. */
export interface EventWithDocuments {
  event: EventRow;
  documents: DocumentRow[];
}

export interface ReturnsCounts {
  jobs: number;
  open: number;
  events: number;
  documents: number;
  documentsDone: number;
  documentsParked: number;
}

/**
 * A claim on a document being written (ReturnsStore.claimDocument). Its lease is reckoned by the
 * store's clock: the writer's `now` in a store of one host (SQLite), the database's now() in the
 * store several agents share (PostgreSQL), so hosts whose clocks disagree still exclude each other.
 */
export interface DocumentClaim {
  /** The writer's clock: when a pending document is due (its next try was set by a writer's clock). */
  now: number;
  /** How long the claim holds. */
  ms: number;
  /** The claim this writer holds (claimDocument's answer): a renewal. */
  held?: number;
}

export interface ReturnsStore {
  /** Where the store is, for logs and messages: a file path, or a URL without its password. */
  readonly location: string;

  getMeta(key: string): Promise<string | undefined>;
  /** Records jobs found in the journal and the feed's new cursor, in one transaction; answers how many were new. */
  addJobs(jobs: readonly NewJob[], cursorKey: string, cursor: string, now: number): Promise<number>;

  job(jobId: string): Promise<JobRow | undefined>;
  /** Jobs not done whose poll time has come, oldest due first. */
  dueJobs(now: number, limit: number): Promise<JobRow[]>;
  openJobs(): Promise<number>;
  /**
   * Polls the job at `at` (a webhook said something changed). A job already done stays done until
   * that poll finds something open again (a resend, a late document). False: not followed.
   */
  pollSoon(jobId: string, at: number): Promise<boolean>;
  /**
   * After a re-send: the job is followed again, due now, and its follow window (maxFollowMs) starts
   * again, so an old job's new event is not given up at its first poll. False: not followed.
   */
  reopenJob(jobId: string, now: number): Promise<boolean>;
  /** A poll failed: try again at `at` (the job's backoff grows as if nothing changed). */
  deferJob(jobId: string, at: number): Promise<void>;
  /**
   * Every job not done is polled within `spreadMs` of `now`, spread evenly over it in due order
   * (the i-th of n at now + i·spreadMs/n), or earlier when its own next poll already was; and the
   * request of POLL_UNFINISHED_KEY is removed, in the same transaction. Answers how many jobs moved.
   */
  pollUnfinishedWithin(now: number, spreadMs: number): Promise<number>;
  /** Records POLL_UNFINISHED_KEY (durable): the follower polls every unfinished job soon. */
  requestPollOfUnfinished(at: number): Promise<void>;

  source(itemId: number): Promise<SourceRow | undefined>;
  jobsOfSource(itemId: number): Promise<JobRow[]>;
  /** The events of a job after `afterId` (ids in order), `limit` at most: one page of a status file. */
  eventsOfJobPage(jobId: string, afterId: string, limit: number): Promise<EventRow[]>;
  /** The same page with each event's documents (ordered as documentsOfEvent orders them). */
  eventsWithDocumentsPage(jobId: string, afterId: string, limit: number): Promise<EventWithDocuments[]>;
  /** Whether every document of every event of the file's jobs is written. */
  allDocumentsDone(itemId: number): Promise<boolean>;
  event(id: string): Promise<EventRow | undefined>;
  /** The events of these ids that are recorded, by id (one page of a poll at once). */
  eventsById(ids: readonly string[]): Promise<Map<string, EventRow>>;
  documentsOfEvent(sendingEventId: string): Promise<DocumentRow[]>;

  /** Records the job's row after a poll (its pages were recorded by recordEvents before). */
  recordPoll(poll: PollRecord, now: number): Promise<void>;
  /**
   * One page of a poll's events (final time kept from the first time seen final) and their new
   * documents, in a transaction of its own; `changed` moves the file's status version with it. The
   * job's row is recorded by recordPoll after the last page.
   */
  recordEvents(
    jobId: string,
    events: readonly PolledEvent[],
    documents: readonly NewDocument[],
    now: number,
    changed: boolean,
  ): Promise<void>;

  /**
   * Documents to fetch now: pending ones whose time has come, and any left `writing` by a crash
   * whose claim (if any) ran out by the store's clock (DocumentClaim).
   */
  dueDocuments(now: number, limit: number): Promise<DocumentRow[]>;
  /** Whether a path is already the name of another document (a template that collides). */
  pathUsedByOther(path: string, sendingEventId: string, fileReference: string): Promise<boolean>;
  /** pathUsedByOther of each document named, in the order given (one statement for a page). */
  pathsUsedByOthers(
    named: readonly { path: string; sendingEventId: string; fileReference: string }[],
  ): Promise<boolean[]>;
  /**
   * Recorded before the download: after a crash, a `writing` document whose file exists is done.
   * Answers whether this writer may go on: false when the document is done or parked.
   */
  markDocumentWriting(d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>): Promise<boolean>;
  /**
   * markDocumentWriting as a claim (several agents on one journal): taken only when due (pending
   * with its next try come at `claim.now`, or left writing by a writer whose claim ran out), and
   * not due again for `claim.ms`, so another agent's follower, its list of due documents read a
   * moment before, neither downloads nor writes it a second time. With `claim.held` (this
   * writer's own claim) it is renewed even before it ran out, unless another writer took it since.
   * Answers the claim, to renew it with (`held`), or undefined when not taken (done, parked, or
   * another writer's). The claim's times are the store's clock's (DocumentClaim).
   */
  claimDocument(
    d: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>,
    claim: DocumentClaim,
  ): Promise<number | undefined>;
  /** The document is written; its file's status version moves, in the same transaction. */
  markDocumentDone(d: DocumentRow, md5: string | undefined, now: number): Promise<void>;
  /** Tried again at `nextTryAt`; a document done meanwhile (another writer) stays done. */
  markDocumentFailed(d: DocumentRow, error: string, nextTryAt: number): Promise<void>;
  /** Failed past the retry policy's limit: left alone until `returns retry` (a document done stays done). */
  markDocumentParked(d: DocumentRow, error: string): Promise<void>;
  /**
   * Documents whose download failed, waiting for their backoff or parked, due now with a fresh
   * count of tries (`docex-agent returns retry`): a running agent's follower takes them at its next
   * pass. Answers how many.
   */
  retryFailedDocumentsNow(now: number): Promise<number>;

  /** Sources whose status file is older than their state. */
  staleSources(limit: number): Promise<SourceRow[]>;
  /**
   * Runs `write` (a status file's write) as the only writer of that source's status file among the
   * agents sharing the store, handing it the source and its jobs (jobsOfSource) as read once it
   * is. When `write` answers that it
   * wrote the file, the source's version is marked written as the writer lets go (answered true).
   * False, without running it, when another agent writes it now or the source is gone. So the writes
   * of one file follow each other, each reading the store after the one before was renamed into
   * place: an older text never replaces a newer one.
   */
  writeStatusAlone(
    itemId: number,
    write: (source: SourceRow, jobs: JobRow[]) => Promise<boolean>,
  ): Promise<boolean>;

  /**
   * Events final on `day` (UTC) after the (finalAt, id) of the last one read, in that order, each
   * with its job, source and documents: one page of a daily CSV.
   */
  eventsFinalOnPage(
    day: string,
    after: { finalAt: number; id: string } | undefined,
    limit: number,
  ): Promise<FinalEventEntry[]>;
  /** How many events became final on `day`. */
  countFinalOn(day: string): Promise<number>;
  /** Days before `today` with final events and no CSV written yet. */
  csvDaysDue(today: string): Promise<string[]>;
  recordCsv(day: string, rows: number, now: number): Promise<void>;

  counts(): Promise<ReturnsCounts>;
  close(): Promise<void>;
}
