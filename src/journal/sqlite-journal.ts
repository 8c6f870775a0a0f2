import type BetterSqlite3 from 'better-sqlite3';
import type { Clock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Database } from '../core/sqlite.js';
import { openDatabase } from '../core/sqlite-store.js';
import { GroupCommit } from './group-commit.js';
import { applyMove, duplicateReason, rowsError } from './moves.js';
import { stripUrlQueries } from './redact.js';
import { type JournalItem, migrate, SCHEMA_VERSION, toItem } from './schema.js';
import { prepareStatements, type Statements, toHistoryEntry } from './statements.js';
import {
  checkTransition,
  ITEM_STATES,
  type ItemMode,
  type ItemState,
  isDurableMove,
  isFinal,
  type RecoveryOptions,
  recoveryAction,
} from './states.js';
import type { FailedTry, JournalStore, LeaseRenewal, TakenOver } from './store.js';
import type {
  ClaimInput,
  HistoryEntry,
  JournalOptions,
  JournalStats,
  PruneBatch,
  RecordedClaim,
  RecoveryStep,
  RowInput,
  TransitionFields,
} from './types.js';

/** How long after an upload is confirmed its dropped URL may linger in the WAL (one checkpoint per burst). */
export const DEFAULT_SCRUB_DELAY_MS = 1_000;

/**
 * The durable record of every claimed file and payload row. SQLite in WAL mode; a move the agent
 * acts on next (a PUT, moving the file out of `.processing/`) is committed with synchronous=FULL
 * and survives a power cut, the others use NORMAL (see isDurableMove). Every move is one transaction
 * with a history entry. The upload URL is stored (a crash must not strand an upload) but never
 * returned in an item, a history entry or a log line; it is dropped from the row as soon as it is
 * no longer needed, and the WAL is checkpointed (TRUNCATE) at once for a refusal or a recreate,
 * within `scrubDelayMs` after a confirmed upload (one checkpoint per burst, not one per file), and
 * on open and close.
 */
export class SqliteJournal implements JournalStore {
  readonly location: string;
  private readonly stmts: Statements;
  private synchronous: 'FULL' | 'NORMAL' = 'FULL';
  private scrubTimer: NodeJS.Timeout | undefined;
  private readonly group: GroupCommit;
  // One transaction wrapper for every move: better-sqlite3 builds a new one per transaction() call.
  private readonly runTx: (fn: () => unknown) => unknown;
  // Prepared once: db.pragma() prepares its statement at every call, and the level changes often.
  private readonly setSynchronous: Record<'FULL' | 'NORMAL', BetterSqlite3.Statement<[]>>;

  private constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly file: string,
    private readonly scrubDelayMs: number,
  ) {
    this.stmts = prepareStatements(db);
    this.group = new GroupCommit(file);
    this.runTx = db.transaction((fn: () => unknown) => fn());
    this.setSynchronous = {
      FULL: db.prepare<[]>('PRAGMA synchronous = FULL'),
      NORMAL: db.prepare<[]>('PRAGMA synchronous = NORMAL'),
    };
    this.location = file;
  }

  static open(file: string, options: JournalOptions): SqliteJournal {
    // Freed bytes are zeroed, so a dropped upload URL does not linger in free page space.
    const db = openDatabase(file, { synchronous: 'FULL', secureDelete: true });
    try {
      const migrated = migrate(db, options.clock.now());
      const journal = new SqliteJournal(
        db,
        options.clock,
        options.log,
        file,
        options.scrubDelayMs ?? DEFAULT_SCRUB_DELAY_MS,
      );
      // A crash may have left dropped URLs in old WAL frames.
      journal.scrubWal();
      const unfinished = journal.unfinishedNow().length;
      options.log.info({ file, schemaVersion: SCHEMA_VERSION, migrated, unfinished }, 'journal opened');
      return journal;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  async recordClaim(input: ClaimInput): Promise<RecordedClaim> {
    const now = this.clock.now();
    // A duplicate is recorded rejected and then moved to error/: that claim must be durable.
    const content = {
      sha256: input.sha256,
      folder: input.folder,
      workflowId: input.workflowId,
      company: input.managedCompanyId ?? null,
    };
    const durable =
      input.refused !== undefined ||
      (!input.allowDuplicates && this.stmts.earlierContent.get(content) !== undefined);
    return this.tx(durable, (): RecordedClaim => {
      if (input.inspectedPath !== undefined) this.stmts.inspectionEnded.run(input.inspectedPath);
      const same = this.stmts.sameFileUnfinished.get(input.folder, input.sha256, input.sourcePath);
      if (same) return { kind: 'in-progress', item: toItem(same) };
      const earlierRow = input.allowDuplicates ? undefined : this.stmts.earlierContent.get(content);
      const earlier = earlierRow ? toItem(earlierRow) : undefined;
      const refused = earlier ? undefined : input.refused;
      const state: ItemState = earlier || refused ? 'rejected' : 'claimed';
      const { refused: _refused, ...columns } = input;
      const inserted = this.stmts.insertFile.run({
        ...columns,
        managedCompanyId: input.managedCompanyId ?? null,
        relativePath: input.relativePath ?? null,
        allowDuplicates: input.allowDuplicates ? 1 : 0,
        state,
        rejectCode: earlier ? 'DOCEX_DUPLICATE' : (refused?.code ?? null),
        rejectReason: earlier ? duplicateReason(earlier) : (refused?.reason ?? null),
        duplicateOf: earlier?.id ?? null,
        now,
      });
      const id = Number(inserted.lastInsertRowid);
      const detail = earlier
        ? { code: 'DOCEX_DUPLICATE', duplicateOf: earlier.id }
        : refused
          ? { code: refused.code, reason: refused.reason }
          : { size: input.size, sha256: input.sha256 };
      this.record(id, undefined, state, now, detail);
      if (state === 'claimed' && input.validatedNote !== undefined) {
        this.applyChecked(id, 'validated', { note: input.validatedNote }, now);
        this.applyChecked(id, 'creating', {}, now);
      }
      const item = this.mustGet(id);
      return earlier ? { kind: 'duplicate', earlier, item } : { kind: 'claimed', item };
    });
  }

  /** Records a validated file's payload rows, all at once, each in state validated (or rejected). */
  async addRows(fileId: number, rows: readonly RowInput[]): Promise<JournalItem[]> {
    const now = this.clock.now();
    return this.tx(true, () => {
      const parent = this.mustGet(fileId);
      if (parent.kind !== 'file' || parent.state !== 'validated') {
        throw rowsError(
          fileId,
          `rows go to a validated file; item ${fileId} is a ${parent.kind} in ${parent.state}`,
        );
      }
      if (rows.length === 0) throw rowsError(fileId, 'a payload file needs at least one row');
      if (this.childStates(parent).length > 0) throw rowsError(fileId, `item ${fileId} already has rows`);
      return rows.map((row) => {
        if (!Number.isInteger(row.rowIndex) || row.rowIndex < 0)
          throw rowsError(fileId, 'rowIndex must be >= 0');
        const state: ItemState = row.rejected ? 'rejected' : 'validated';
        const inserted = this.stmts.insertRow.run({
          parentId: fileId,
          rowIndex: row.rowIndex,
          label: row.label ?? null,
          payloadSha256: row.payloadSha256 ?? null,
          state,
          rejectCode: row.rejected?.code ?? null,
          rejectReason: row.rejected ? stripUrlQueries(row.rejected.reason) : null,
          now,
        });
        const id = Number(inserted.lastInsertRowid);
        this.record(
          id,
          undefined,
          state,
          now,
          row.rejected ? { code: row.rejected.code } : { rowIndex: row.rowIndex },
        );
        return this.mustGet(id);
      });
    });
  }

  /** One legal move, one transaction; an illegal one throws DOCEX_JOURNAL_TRANSITION. */
  async transition(itemId: number, to: ItemState, fields: TransitionFields = {}): Promise<JournalItem> {
    const mode = (this.stmts.modeOf.get(itemId)?.['mode'] ?? 'single-file') as ItemMode;
    return this.move(itemId, to, fields, isDurableMove(to, mode));
  }

  /**
   * The same move, committed without waiting for the disk in the event loop; resolves once it is
   * on disk. Moves committed close together share one fsync of the WAL (group commit), so a burst
   * of files costs a few fsyncs, not two per file. For a move the next step acts on (a PUT, moving
   * the file out of `.processing/`).
   */
  async commitMove(itemId: number, to: ItemState, fields: TransitionFields = {}): Promise<JournalItem> {
    const item = this.move(itemId, to, fields, false);
    await this.flush();
    return item;
  }

  /** Resolves once every transaction committed before the call is on disk. */
  flush(): Promise<void> {
    return this.group.flush();
  }

  private move(itemId: number, to: ItemState, fields: TransitionFields, durableNow: boolean): JournalItem {
    const now = this.clock.now();
    const { item, hadUrl } = this.tx(durableNow, () => this.applyChecked(itemId, to, fields, now));
    this.log.debug({ itemId, to, jobId: item.jobId, attempt: item.attempt }, 'journal transition');
    if (hadUrl && !item.hasUploadUrl) {
      if (to === 'uploaded') this.scheduleScrub();
      else this.scrubWal();
    }
    return item;
  }

  /** One legal move with its history entry, inside the caller's transaction. */
  private applyChecked(
    itemId: number,
    to: ItemState,
    fields: TransitionFields,
    now: number,
  ): { item: JournalItem; hadUrl: boolean } {
    const current = this.mustGet(itemId);
    // Rows go only to a validated file, which then moves only to done or rejected: a file in any
    // other state has none, and its rows are not looked up (one query less per move of a file).
    const childStates = current.state === 'validated' ? this.childStates(current) : [];
    const check = checkTransition({ ...current, childStates }, to);
    if (!check.ok) {
      throw new DocexError('DOCEX_JOURNAL_TRANSITION', `item ${itemId}: ${check.reason}`, {
        details: { itemId, from: current.state, to },
      });
    }
    this.record(itemId, current.state, to, now, applyMove(this.stmts, current, to, fields, now));
    return { item: this.mustGet(itemId), hadUrl: current.hasUploadUrl };
  }

  /** Drops the upload URL (after the upload is confirmed); the WAL is checkpointed so no copy stays. */
  async forgetUploadUrl(itemId: number): Promise<void> {
    if (this.stmts.forgetUrl.run(this.clock.now(), itemId).changes > 0) this.scrubWal();
  }

  /** The pre-signed URL of a created job, for the uploader only. Never log what this returns. */
  async revealUploadUrl(itemId: number): Promise<string | undefined> {
    const url = this.stmts.uploadUrl.get(itemId)?.['upload_url'];
    return typeof url === 'string' ? url : undefined;
  }

  async recordFailedTry(itemId: number, failure: FailedTry): Promise<JournalItem> {
    // NORMAL: a power cut that drops it only shortens one wait.
    return this.tx(false, () => {
      this.stmts.failedTry.run({
        id: itemId,
        code: failure.code,
        nextTryAt: failure.nextTryAt,
        add: failure.counted === false ? 0 : 1,
      });
      return this.mustGet(itemId);
    });
  }

  async clearFailedTries(itemId: number): Promise<void> {
    this.tx(false, () => this.stmts.clearTries.run(itemId));
  }

  async get(itemId: number): Promise<JournalItem | undefined> {
    return this.getNow(itemId);
  }

  private getNow(itemId: number): JournalItem | undefined {
    const row = this.stmts.get.get(itemId);
    return row ? toItem(row) : undefined;
  }

  async byJobId(jobId: string): Promise<JournalItem | undefined> {
    const row = this.stmts.byJobId.get(jobId);
    return row ? toItem(row) : undefined;
  }

  /** File items whose source or claimed path is this path, newest first. */
  async byPath(path: string): Promise<JournalItem[]> {
    return this.stmts.byPath.all(path, path).map(toItem);
  }

  async rowsOf(fileId: number): Promise<JournalItem[]> {
    return this.stmts.rowsOf.all(fileId).map(toItem);
  }

  /** The most recently moved file items, for `docex-agent status`. */
  async recent(limit = 50): Promise<JournalItem[]> {
    return this.stmts.recent.all(limit).map(toItem);
  }

  /** Items neither done nor rejected, oldest first: what a restart must resume. */
  async unfinished(): Promise<JournalItem[]> {
    return this.unfinishedNow();
  }

  private unfinishedNow(): JournalItem[] {
    return this.stmts.unfinished.all().map(toItem);
  }

  /** Every unfinished item with what to do about it now (by the injected clock). */
  async recoveryPlan(options: RecoveryOptions = {}): Promise<RecoveryStep[]> {
    const now = this.clock.now();
    return this.unfinishedNow().map((item) => ({
      item,
      action: recoveryAction({ ...item, childStates: this.childStates(item) }, now, options),
    }));
  }

  /**
   * Records that the file at `path` is being inspected (parsed), before the parse starts; a record
   * still there at the next start means a crash interrupted it. Committed like a claim (NORMAL): a
   * killed process loses nothing of it.
   */
  async inspectionStarting(path: string): Promise<void> {
    this.tx(false, () => this.stmts.inspectionStarting.run(path, this.clock.now()));
  }

  async inspectionEnded(path: string): Promise<void> {
    this.tx(false, () => this.stmts.inspectionEnded.run(path));
  }

  async interruptedInspections(path: string, startedBefore = Number.MAX_SAFE_INTEGER): Promise<number> {
    const row = this.stmts.interruptedInspections.get(path, startedBefore);
    return typeof row?.['n'] === 'number' ? row['n'] : 0;
  }

  async history(itemId: number): Promise<HistoryEntry[]> {
    return this.stmts.history.all(itemId).map(toHistoryEntry);
  }

  async stats(): Promise<JournalStats> {
    const zero = () => Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    const stats: JournalStats = { files: zero(), rows: zero(), unfinished: 0 };
    for (const r of this.stmts.counts.all()) {
      const state = r['state'] as ItemState;
      const n = r['n'] as number;
      (r['kind'] === 'file' ? stats.files : stats.rows)[state] = n;
      if (!isFinal(state)) stats.unfinished += n;
    }
    return stats;
  }

  /**
   * One batch of pruning (JournalStore): the finished files among ids (afterId, afterId +
   * scanIds] last moved before `cutoffMs`. A done file keeps its own row, which duplicate
   * detection reads; its history and payload rows go. A rejected file goes whole. One transaction
   * (NORMAL: losing a prune to a power cut only means doing it again).
   */
  async pruneFinished(cutoffMs: number, afterId: number, scanIds: number): Promise<PruneBatch> {
    const upTo = afterId + Math.max(1, scanIds);
    return this.tx(false, () => {
      const batch: PruneBatch = { items: 0, rows: 0, history: 0, next: undefined };
      for (const row of this.stmts.pruneCandidates.all(afterId, upTo, cutoffMs)) {
        const id = row['id'] as number;
        const history = this.stmts.pruneRowsHistory.run(id).changes + this.stmts.pruneHistory.run(id).changes;
        const rows = this.stmts.pruneRows.run(id).changes;
        const removed = this.stmts.pruneItem.run(id).changes;
        if (history + rows + removed > 0) batch.items++;
        batch.history += history;
        batch.rows += rows;
      }
      const maxId = (this.stmts.maxId.get()?.['id'] as number | null) ?? 0;
      batch.next = upTo < maxId ? upTo : undefined;
      return batch;
    });
  }

  // Leases: the journal is a file of one agent, which holds every file; nothing to renew or take.
  holds(): boolean {
    return true;
  }

  async renewLeases(): Promise<LeaseRenewal> {
    return { renewed: 0, lost: [] };
  }

  async takeOverFiles(): Promise<TakenOver[]> {
    return [];
  }

  async takeOverCopy(): Promise<TakenOver[]> {
    return [];
  }

  async leaseForSend(): Promise<number | undefined> {
    return undefined;
  }

  placeAlone<T>(_item: Pick<JournalItem, 'id' | 'parentId'>, place: () => Promise<T>): Promise<T> {
    return place();
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    if (this.scrubTimer) this.scrubWal();
    this.db.close();
    this.group.close();
  }

  /** One transaction; the synchronous level is chosen before it starts (SQLite ignores it inside one). */
  private tx<T>(durable: boolean, fn: () => T): T {
    const level = durable ? 'FULL' : 'NORMAL';
    if (this.synchronous !== level) {
      this.setSynchronous[level].run();
      this.synchronous = level;
    }
    const result = this.runTx(fn) as T;
    this.group.committedOne(durable);
    return result;
  }

  /** Uploads confirmed close together share one checkpoint. */
  private scheduleScrub(): void {
    if (this.scrubDelayMs <= 0) {
      this.scrubWal();
      return;
    }
    if (this.scrubTimer) return;
    this.scrubTimer = setTimeout(() => {
      if (this.db.open) this.scrubWal();
    }, this.scrubDelayMs);
    this.scrubTimer.unref();
  }

  private record(
    itemId: number,
    from: ItemState | undefined,
    to: ItemState,
    at: number,
    detail: object,
  ): void {
    const json = Object.keys(detail).length > 0 ? JSON.stringify(detail) : null;
    this.stmts.insertHistory.run(itemId, from ?? null, to, at, json);
  }

  private childStates(item: JournalItem): ItemState[] {
    if (item.kind !== 'file') return [];
    return this.stmts.childStates.all(item.id).map((r) => r['state'] as ItemState);
  }

  private mustGet(itemId: number): JournalItem {
    const item = this.getNow(itemId);
    if (!item)
      throw new DocexError('DOCEX_JOURNAL_UNKNOWN_ITEM', `no journal item ${itemId}`, {
        details: { itemId },
      });
    return item;
  }

  /** Old WAL frames still hold a dropped URL; a TRUNCATE checkpoint empties the WAL file. */
  private scrubWal(): void {
    if (this.scrubTimer) clearTimeout(this.scrubTimer);
    this.scrubTimer = undefined;
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }
}
