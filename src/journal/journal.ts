import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { Database } from '../core/sqlite.js';
import type { Clock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { applyMove, duplicateReason, rowsError } from './moves.js';
import { stripUrlQueries } from './redact.js';
import { type JournalItem, migrate, SCHEMA_VERSION, toItem } from './schema.js';
import { prepareStatements, type Statements } from './statements.js';
import {
  checkTransition,
  ITEM_STATES,
  type ItemState,
  isFinal,
  type RecoveryOptions,
  recoveryAction,
} from './states.js';
import type {
  ClaimInput,
  ClaimResult,
  HistoryEntry,
  JournalOptions,
  JournalStats,
  RecoveryStep,
  RowInput,
  TransitionFields,
} from './types.js';

/**
 * The durable record of every claimed file and payload row. SQLite in WAL mode with
 * synchronous=FULL: a move the agent acted on survives a power cut. Every move is one transaction
 * with a history entry. The upload URL is stored (a crash must not strand an upload) but never
 * returned in an item, a history entry or a log line; it is dropped from the row, and the WAL
 * checkpointed, as soon as it is no longer needed.
 */
export class Journal {
  private readonly stmts: Statements;

  private constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly file: string,
  ) {
    this.stmts = prepareStatements(db);
  }

  static open(file: string, options: JournalOptions): Journal {
    const db = openDatabase(file);
    try {
      const migrated = migrate(db, options.clock.now());
      const journal = new Journal(db, options.clock, options.log, file);
      const unfinished = journal.unfinished().length;
      options.log.info({ file, schemaVersion: SCHEMA_VERSION, migrated, unfinished }, 'journal opened');
      return journal;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  claim(input: ClaimInput): ClaimResult {
    const now = this.clock.now();
    return this.db.transaction((): ClaimResult => {
      const same = this.stmts.sameFileUnfinished.get(input.folder, input.sha256, input.sourcePath);
      if (same) return { kind: 'in-progress', item: toItem(same) };
      const earlierRow = input.allowDuplicates
        ? undefined
        : this.stmts.earlierContent.get(input.sha256, input.folder, input.workflowId);
      const earlier = earlierRow ? toItem(earlierRow) : undefined;
      const state: ItemState = earlier ? 'rejected' : 'claimed';
      const inserted = this.stmts.insertFile.run({
        ...input,
        allowDuplicates: input.allowDuplicates ? 1 : 0,
        state,
        rejectCode: earlier ? 'DOCEX_DUPLICATE' : null,
        rejectReason: earlier ? duplicateReason(earlier) : null,
        duplicateOf: earlier?.id ?? null,
        now,
      });
      const id = Number(inserted.lastInsertRowid);
      const detail = earlier
        ? { code: 'DOCEX_DUPLICATE', duplicateOf: earlier.id }
        : { size: input.size, sha256: input.sha256 };
      this.record(id, undefined, state, now, detail);
      const item = this.mustGet(id);
      return earlier ? { kind: 'duplicate', earlier, item } : { kind: 'claimed', item };
    })();
  }

  /** Records a validated file's payload rows, all at once, each in state validated (or rejected). */
  addRows(fileId: number, rows: readonly RowInput[]): JournalItem[] {
    const now = this.clock.now();
    return this.db.transaction(() => {
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
    })();
  }

  /** One legal move, one transaction; an illegal one throws DOCEX_JOURNAL_TRANSITION. */
  transition(itemId: number, to: ItemState, fields: TransitionFields = {}): JournalItem {
    const now = this.clock.now();
    let hadUrl = false;
    const item = this.db.transaction(() => {
      const current = this.mustGet(itemId);
      const check = checkTransition({ ...current, childStates: this.childStates(current) }, to);
      if (!check.ok) {
        throw new DocexError('DOCEX_JOURNAL_TRANSITION', `item ${itemId}: ${check.reason}`, {
          details: { itemId, from: current.state, to },
        });
      }
      hadUrl = current.hasUploadUrl;
      this.record(itemId, current.state, to, now, applyMove(this.stmts, current, to, fields, now));
      return this.mustGet(itemId);
    })();
    this.log.debug({ itemId, to, jobId: item.jobId, attempt: item.attempt }, 'journal transition');
    if (hadUrl && !item.hasUploadUrl) this.scrubWal();
    return item;
  }

  /** Drops the upload URL (after the upload is confirmed); the WAL is checkpointed so no copy stays. */
  forgetUploadUrl(itemId: number): void {
    if (this.stmts.forgetUrl.run(this.clock.now(), itemId).changes > 0) this.scrubWal();
  }

  /** The pre-signed URL of a created job, for the uploader only. Never log what this returns. */
  revealUploadUrl(itemId: number): string | undefined {
    const url = this.stmts.uploadUrl.get(itemId)?.['upload_url'];
    return typeof url === 'string' ? url : undefined;
  }

  get(itemId: number): JournalItem | undefined {
    const row = this.stmts.get.get(itemId);
    return row ? toItem(row) : undefined;
  }

  byJobId(jobId: string): JournalItem | undefined {
    const row = this.stmts.byJobId.get(jobId);
    return row ? toItem(row) : undefined;
  }

  /** File items whose source or claimed path is this path, newest first. */
  byPath(path: string): JournalItem[] {
    return this.stmts.byPath.all(path, path).map(toItem);
  }

  rowsOf(fileId: number): JournalItem[] {
    return this.stmts.rowsOf.all(fileId).map(toItem);
  }

  /** The most recently moved file items, for `docex-agent status`. */
  recent(limit = 50): JournalItem[] {
    return this.stmts.recent.all(limit).map(toItem);
  }

  /** Items neither done nor rejected, oldest first: what a restart must resume. */
  unfinished(): JournalItem[] {
    return this.stmts.unfinished.all().map(toItem);
  }

  /** Every unfinished item with what to do about it now (by the injected clock). */
  recoveryPlan(options: RecoveryOptions = {}): RecoveryStep[] {
    const now = this.clock.now();
    return this.unfinished().map((item) => ({
      item,
      action: recoveryAction({ ...item, childStates: this.childStates(item) }, now, options),
    }));
  }

  history(itemId: number): HistoryEntry[] {
    return this.stmts.history.all(itemId).map((r) => ({
      itemId: r['item_id'] as number,
      from: (r['from_state'] ?? undefined) as ItemState | undefined,
      to: r['to_state'] as ItemState,
      at: r['at'] as number,
      detail:
        r['detail'] === null ? undefined : (JSON.parse(r['detail'] as string) as Record<string, unknown>),
    }));
  }

  stats(): JournalStats {
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

  close(): void {
    if (this.db.open) this.db.close();
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
    const item = this.get(itemId);
    if (!item)
      throw new DocexError('DOCEX_JOURNAL_UNKNOWN_ITEM', `no journal item ${itemId}`, {
        details: { itemId },
      });
    return item;
  }

  /** Old WAL frames still hold a dropped URL; a TRUNCATE checkpoint empties the WAL file. */
  private scrubWal(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }
}

/** The file is made 0600 before SQLite opens it; SQLite gives its -wal and -shm files the same mode. */
function openDatabase(file: string): Database {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Freed bytes are zeroed, so a dropped upload URL does not linger in free page space.
    db.pragma('secure_delete = ON');
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
