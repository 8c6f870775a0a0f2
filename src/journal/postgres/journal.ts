/**
 * The journal on a PostgreSQL server: the same record and rules as the SQLite journal (journal.ts,
 * states.ts), for several async callers in one process and, later, several agents on one database.
 *
 * Every operation of more than one statement is one transaction on one pooled client. Locking:
 * - a claim takes an advisory lock on its content (hashtext of the SHA-256) before the duplicate
 *   check, so two claims of the same content are serialized (across agents too) and exactly one
 *   is `claimed`;
 * - a move locks its item FOR UPDATE; a payload row's move first locks its file FOR SHARE. A file's
 *   own move (to done: all rows final) and addRows lock the file FOR UPDATE, so they wait for
 *   row moves in flight and read the rows' committed states. Locks are always taken file first,
 *   then row, so moves cannot deadlock;
 * - history entries are inserted last, under a shared advisory lock held until the commit, so a
 *   reader following history by id never passes an entry that commits late (reader.ts).
 * Leases (with options.lease, an agent's journal): each unfinished file is held by one agent until
 * its lease ends by the database's clock; this journal keeps the epoch it holds each file by and
 * checks it, under the file's row lock, in every write for the file or its rows (a takeover updates
 * the file row, so it waits for a write in flight and the write after it finds the new epoch): a
 * write for a file held elsewhere changes nothing and rejects with DOCEX_LEASE_LOST.
 * Commits are durable when they answer (synchronous_commit=on), but for a file's `done` (as
 * SQLite's NORMAL: nothing acts on it, and a database crash that loses it leaves the file uploaded,
 * whose recovery finds it archived), so flush() only waits for the writes in flight. The upload URL is stored but read only by revealUploadUrl; pg's errors leave
 * as DocexErrors without the password or a URL's query.
 */
import type { Clock } from '../../core/clock.js';
import { DocexError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { PostgresConnection } from '../location.js';
import { duplicateReason, rowsError } from '../moves.js';
import { stripUrlQueries } from '../redact.js';
import type { JournalItem } from '../schema.js';
import {
  checkTransition,
  ITEM_STATES,
  type ItemState,
  isFinal,
  type RecoveryOptions,
  recoveryAction,
} from '../states.js';
import type { FailedTry, JournalStore, LeaseRenewal, LostLease, TakenOver, TakeOverScope } from '../store.js';
import type {
  ClaimInput,
  HistoryEntry,
  JournalOptions,
  JournalStats,
  LeaseOptions,
  PruneBatch,
  RecordedClaim,
  RecoveryStep,
  RowInput,
  TransitionFields,
} from '../types.js';
import {
  type ClaimMove,
  detailText,
  firstCreate,
  type PlannedMove,
  planMove,
  validatedToCreating,
} from './moves.js';
import { allowing, type BeginStatement, PgSession, type Tx } from './pool.js';
import { historyEntryOf, itemOf as item, type Row } from './rows.js';
import { LOCK_SPACE, MARK_AGENT_STOPPED, migrate, PG_SCHEMA_VERSION } from './schema.js';
import { beginWithClaimLock, oneStatementMove, STATEMENTS as S } from './statements.js';

/** A transaction's history entries, inserted together as its last statement. */
class HistoryBatch {
  private readonly itemIds: number[] = [];
  private readonly from: (string | null)[] = [];
  private readonly to: string[] = [];
  private readonly at: number[] = [];
  private readonly details: (string | null)[] = [];

  add(itemId: number, from: ItemState | undefined, to: ItemState, at: number, detail: object): void {
    this.itemIds.push(itemId);
    this.from.push(from ?? null);
    this.to.push(to);
    this.at.push(at);
    this.details.push(detailText(detail));
  }

  /** Set when the transaction's statements may take longer than the connection's timeoutMs. */
  allowedMs: number | undefined;

  async insert(tx: Tx): Promise<void> {
    if (this.itemIds.length === 0) return;
    const statement =
      this.allowedMs === undefined ? S.insertHistory : allowing(S.insertHistory, this.allowedMs);
    await tx.rows(statement, [this.itemIds, this.from, this.to, this.at, this.details]);
  }
}

/** What each payload row adds to the time addRows' statements may take (a generous bound). */
const BULK_MS_PER_ROW = 0.2;

/** Files taken over per statement (a takeover at start takes them all, in batches). */
const TAKE_OVER_BATCH = 500;

/** Unfinished files whose last seen row the journal keeps for one-statement moves, at most. */
const SEEN_FILES_MAX = 10_000;

function leaseLost(fileId: number, owner: unknown): DocexError {
  const holder = typeof owner === 'string' ? `agent ${owner}` : 'no agent';
  return new DocexError(
    'DOCEX_LEASE_LOST',
    `this agent no longer holds file item ${fileId}: ${holder} holds it now`,
    { details: { itemId: fileId, owner: typeof owner === 'string' ? owner : null } },
  );
}

function unknownItem(itemId: number): DocexError {
  return new DocexError('DOCEX_JOURNAL_UNKNOWN_ITEM', `no journal item ${itemId}`, { details: { itemId } });
}

export class PostgresJournal implements JournalStore {
  readonly location: string;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The files this agent holds, by id, with the epoch it took each by (leases only). */
  private readonly held = new Map<number, number>();
  /**
   * When this agent last set each held file's lease (its claim or a renewal), on this host's
   * monotonic clock, read before the statement was sent: the lease runs at least leaseMs from then.
   */
  private readonly leaseSetAt = new Map<number, number>();
  /**
   * The upload URL of an item this journal has just moved to created, until it is read once: the
   * PUT that follows its create needs no round trip to read it back.
   */
  private readonly newUploadUrls = new Map<number, string>();
  /** Unfinished files as this journal last read or wrote them: their next move may take one statement. */
  private readonly seen = new Map<number, JournalItem>();
  private closed = false;

  private constructor(
    private readonly db: PgSession,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly lease: LeaseOptions | undefined,
  ) {
    this.location = db.location;
  }

  /** Connects, brings the schema up (or refuses a newer one) and answers the journal. */
  static async open(connection: PostgresConnection, options: JournalOptions): Promise<PostgresJournal> {
    const db = PgSession.open(connection, {}, options.log);
    let registered = false;
    try {
      const migrated = await migrate(db, options.clock.now(), {
        deadAfterMs: options.deadAfterMs,
        agent: options.agent,
      });
      registered = options.agent !== undefined;
      const journal = new PostgresJournal(db, options.clock, options.log, options.lease);
      const unfinished = (await journal.unfinished()).length;
      options.log.info(
        { location: db.location, schemaVersion: PG_SCHEMA_VERSION, migrated, unfinished },
        'journal opened',
      );
      return journal;
    } catch (err) {
      // An agent that does not start must not hold a migration back for deadAfterMs.
      if (registered) {
        await db
          .rows('journal: mark this agent stopped', { text: MARK_AGENT_STOPPED }, [options.agent!.id])
          .catch(() => undefined);
      }
      await db.end().catch(() => undefined);
      throw err;
    }
  }

  recordClaim(input: ClaimInput): Promise<RecordedClaim> {
    const now = this.clock.now();
    const asked = this.monotonicNow();
    const begin = beginWithClaimLock(input.sha256);
    let inspectionCleared = input.inspectedPath === undefined;
    const claim = this.write(
      'recordClaim',
      async (tx): Promise<RecordedClaim> => {
        if (this.lease && input.remote) {
          const second = Math.floor(input.mtimeMs / 1000) * 1000;
          const drop = await tx.one(S.sameDrop, [
            input.folder,
            input.sourcePath,
            input.sha256,
            input.size,
            second,
          ]);
          if (drop) return { kind: 'same-drop', item: item(drop) };
        }
        // Inserted as a new file in one statement, unless this file is recorded or its content was
        // taken before: those rows answer instead, and the claim is decided here.
        const found = await tx.rows(S.claimFile, [
          ...fileValues(input, now, this.lease, undefined),
          // Agents sharing a folder: the file at this claimed path may be recorded by another agent.
          this.lease !== undefined,
          input.inspectedPath ?? null,
        ]);
        inspectionCleared = true;
        const inserted = found.find((row) => row['found'] === 'inserted');
        if (inserted) return { kind: 'claimed', item: item(inserted) };
        const same = found.find((row) => row['found'] === 'same');
        if (same) return { kind: 'in-progress', item: item(same) };
        const earlier = item(found.find((row) => row['found'] === 'earlier')!);
        if (this.lease && (await this.sameFileGone(earlier, input))) {
          return { kind: 'same-drop', item: earlier };
        }
        const duplicate = await tx.one(S.insertFile, fileValues(input, now, this.lease, earlier));
        return { kind: 'duplicate', earlier, item: item(duplicate!) };
      },
      begin,
    );
    // Held once committed: a renewal running meanwhile does not see the row, and must not judge it.
    return claim.then(async (recorded) => {
      if (this.lease && recorded.kind === 'claimed' && recorded.item.state !== 'rejected') {
        this.held.set(recorded.item.id, recorded.item.epoch);
        this.leaseSetAt.set(recorded.item.id, asked);
      }
      this.saw(recorded.item);
      // Answered before claimFile, which clears it (the same drop, already recorded): cleared alone.
      // The claim stands whatever this answers; a record left costs one lone inspection.
      if (!inspectionCleared) {
        await this.inspectionEnded(input.inspectedPath!).catch((err: unknown) =>
          this.log.warn({ err, path: input.inspectedPath }, 'inspection record not cleared'),
        );
      }
      return recorded;
    });
  }

  addRows(fileId: number, rows: readonly RowInput[]): Promise<JournalItem[]> {
    const now = this.clock.now();
    return this.write('addRows', async (tx, history) => {
      // FOR UPDATE: a move of the file (to creating, say) waits, and sees the rows once they exist.
      const parentRow = await tx.one(S.getForUpdate, [fileId]);
      if (!parentRow) throw unknownItem(fileId);
      const parent = item(parentRow);
      this.fence(parentRow);
      if (parent.kind !== 'file' || parent.state !== 'validated') {
        throw rowsError(
          fileId,
          `rows go to a validated file; item ${fileId} is a ${parent.kind} in ${parent.state}`,
        );
      }
      if (rows.length === 0) throw rowsError(fileId, 'a payload file needs at least one row');
      if ((await tx.one(S.hasRows, [fileId]))?.['has'] === true) {
        throw rowsError(fileId, `item ${fileId} already has rows`);
      }
      const seen = new Set<number>();
      for (const row of rows) {
        if (!Number.isInteger(row.rowIndex) || row.rowIndex < 0)
          throw rowsError(fileId, 'rowIndex must be >= 0');
        if (seen.has(row.rowIndex)) throw rowsError(fileId, `rowIndex ${row.rowIndex} is given twice`);
        seen.add(row.rowIndex);
      }
      // A file of 100,000 rows takes seconds on a fast server: its two big statements get the time.
      const allowedMs = Math.ceil(this.db.timeoutMs + rows.length * BULK_MS_PER_ROW);
      await tx.rows(S.allowLonger, [String(allowedMs)]);
      history.allowedMs = allowedMs;
      const inserted = await tx.rows(allowing(S.insertRows, allowedMs), [
        fileId,
        now,
        rows.map((r) => r.rowIndex),
        rows.map((r) => (r.rejected ? 'rejected' : 'validated')),
        rows.map((r) => r.label ?? null),
        rows.map((r) => r.payloadSha256 ?? null),
        rows.map((r) => r.rejected?.code ?? null),
        rows.map((r) => (r.rejected ? stripUrlQueries(r.rejected.reason) : null)),
      ]);
      const byIndex = new Map(inserted.map((r) => [r['row_index'] as number, item(r)]));
      return rows.map((row) => {
        const recorded = byIndex.get(row.rowIndex)!;
        history.add(
          recorded.id,
          undefined,
          recorded.state,
          now,
          row.rejected ? { code: row.rejected.code } : { rowIndex: row.rowIndex },
        );
        return recorded;
      });
    });
  }

  async transition(itemId: number, to: ItemState, fields: TransitionFields = {}): Promise<JournalItem> {
    const now = this.clock.now();
    const moved =
      (await this.moveInOne(itemId, to, fields, now)) ??
      (await this.write('transition', (tx, history) =>
        this.applyChecked(tx, history, itemId, to, fields, now),
      ));
    this.saw(moved);
    this.newUploadUrls.delete(itemId);
    // Only a mode with an upload step keeps the URL (planMove stores none for the others).
    if (to === 'created' && fields.uploadUrl && moved.hasUploadUrl) {
      this.newUploadUrls.set(itemId, fields.uploadUrl);
      if (this.newUploadUrls.size > SEEN_FILES_MAX)
        this.newUploadUrls.delete(this.newUploadUrls.keys().next().value!);
    }
    if (moved.kind === 'file' && isFinal(moved.state)) this.forgetHold(moved.id);
    this.log.debug({ itemId, to, jobId: moved.jobId, attempt: moved.attempt }, 'journal transition');
    return moved;
  }

  /**
   * The move of a file this journal saw last as it still is, in one statement (oneStatementMove);
   * undefined when the file was not seen, the move needs a look at its rows or its fields are not
   * right, or the row changed since: the transaction's way then decides, and says why.
   */
  private async moveInOne(
    itemId: number,
    to: ItemState,
    fields: TransitionFields,
    now: number,
  ): Promise<JournalItem | undefined> {
    const current = this.seen.get(itemId);
    const epoch = this.epochOf(itemId);
    if (!current || epoch === -1 || !checkTransition(current, to).ok) return undefined;
    let move: PlannedMove;
    try {
      move = planMove(current, to, fields, now);
    } catch {
      return undefined;
    }
    // `done` as SQLite's NORMAL (isDurableMove): a database crash that loses it leaves the file
    // uploaded, whose recovery finds it archived and records done again.
    const statement = oneStatementMove(move.statement, move.values.length + 1, to === 'done');
    const row = await this.track(
      this.db.one('transition', statement, [
        ...move.values,
        current.state,
        current.attempt,
        current.jobId ?? null,
        this.lease?.agentId ?? null,
        epoch,
        now,
        detailText(move.detail),
      ]),
    );
    return row ? item(row) : undefined;
  }

  /** Kept for the next move: the unfinished files this journal read or wrote, as it saw them. */
  private saw(file: JournalItem): void {
    if (file.kind !== 'file') return;
    this.seen.delete(file.id);
    if (isFinal(file.state)) return;
    this.seen.set(file.id, file);
    if (this.seen.size > SEEN_FILES_MAX) this.seen.delete(this.seen.keys().next().value!);
  }

  /** Every commit is durable when it answers (synchronous_commit=on): the same as transition. */
  commitMove(itemId: number, to: ItemState, fields: TransitionFields = {}): Promise<JournalItem> {
    return this.transition(itemId, to, fields);
  }

  /** Resolves once the writes begun before the call have ended (each committed one is on disk, but a `done`). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * One legal move with its history entry, inside the caller's transaction: a row's file is locked
   * (shared) before the row, as every move and addRows lock file before row, and the file is fenced.
   */
  private async applyChecked(
    tx: Tx,
    history: HistoryBatch,
    itemId: number,
    to: ItemState,
    fields: TransitionFields,
    now: number,
  ): Promise<JournalItem> {
    const parent = await tx.one(S.lockParentOf, [itemId]);
    const row = await tx.one(S.getForUpdate, [itemId]);
    if (!row) throw unknownItem(itemId);
    const current = item(row);
    if (parent) this.fence(parent);
    else if (current.kind === 'file') this.fence(row);
    const childStates =
      current.kind === 'file'
        ? (await tx.rows(S.childStates, [itemId])).map((r) => r['state'] as ItemState)
        : [];
    return this.applyTo(tx, history, { ...current, childStates }, to, fields, now);
  }

  private async applyTo(
    tx: Tx,
    history: HistoryBatch,
    current: JournalItem & { childStates: ItemState[] },
    to: ItemState,
    fields: TransitionFields,
    now: number,
  ): Promise<JournalItem> {
    const check = checkTransition(current, to);
    if (!check.ok) {
      throw new DocexError('DOCEX_JOURNAL_TRANSITION', `item ${current.id}: ${check.reason}`, {
        details: { itemId: current.id, from: current.state, to },
      });
    }
    const move = planMove(current, to, fields, now);
    const updated = await tx.one(move.statement, move.values);
    history.add(current.id, current.state, to, now, move.detail);
    return item(updated!);
  }

  forgetUploadUrl(itemId: number): Promise<void> {
    this.newUploadUrls.delete(itemId);
    return this.track(
      this.db.rows('forgetUploadUrl', S.forgetUrl, [itemId, this.clock.now()]).then(() => undefined),
    );
  }

  async revealUploadUrl(itemId: number): Promise<string | undefined> {
    const known = this.newUploadUrls.get(itemId);
    if (known !== undefined) {
      this.newUploadUrls.delete(itemId);
      return known;
    }
    const url = (await this.db.one('revealUploadUrl', S.uploadUrl, [itemId]))?.['upload_url'];
    return typeof url === 'string' ? url : undefined;
  }

  recordFailedTry(itemId: number, failure: FailedTry): Promise<JournalItem> {
    return this.track(
      this.db
        .one('recordFailedTry', S.recordFailedTry, [
          itemId,
          failure.nextTryAt,
          failure.code,
          this.epochOf(itemId),
          failure.counted === false ? 0 : 1,
        ])
        .then(async (row) => {
          if (!row) throw await this.missedWrite(itemId);
          return item(row);
        }),
    );
  }

  clearFailedTries(itemId: number): Promise<void> {
    return this.track(
      this.db
        .rows('clearFailedTries', S.clearFailedTries, [itemId, this.epochOf(itemId)])
        .then(async (rows) => {
          if (rows.length === 0) throw await this.missedWrite(itemId);
        }),
    );
  }

  holds(fileId: number): boolean {
    return !this.lease || this.held.has(fileId);
  }

  async renewLeases(): Promise<LeaseRenewal> {
    if (!this.lease) return { renewed: 0, lost: [] };
    const { agentId, leaseMs } = this.lease;
    // Files claimed while the statement runs are not in its answer: only these are judged.
    const before = new Map(this.held);
    const asked = this.monotonicNow();
    const rows = await this.db.rows('renewLeases', S.renewLeases, [agentId, leaseMs]);
    const renewed = new Map(rows.map((r) => [r['id'] as number, r['epoch'] as number]));
    const lost: LostLease[] = [];
    for (const [fileId, epoch] of before) {
      if (renewed.get(fileId) === epoch) {
        if (this.held.get(fileId) === epoch) this.leaseSetAt.set(fileId, asked);
        continue;
      }
      const holder = await this.db.one('holderOf', S.holderOf, [fileId]);
      // Still this agent's by the same epoch: it finished meanwhile (renewal skips finished files).
      if (holder && holder['owner'] === agentId && holder['epoch'] === epoch) continue;
      // Gone from `held` already: a write found it first, and said so.
      if (this.held.get(fileId) !== epoch || !this.letGo(fileId, holder)) continue;
      lost.push({ itemId: fileId, owner: (holder?.['owner'] as string | null) ?? undefined });
    }
    return { renewed: rows.length, lost };
  }

  async takeOverFiles(
    scope: TakeOverScope,
    options: RecoveryOptions & { limit?: number } = {},
  ): Promise<TakenOver[]> {
    if (!this.lease) return [];
    const { agentId, leaseMs, place } = this.lease;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const previous = new Map<number, string | undefined>();
    while (previous.size < limit) {
      const batch = Math.min(TAKE_OVER_BATCH, limit - previous.size);
      const taken = await this.db.rows('takeOverFiles', S.takeOver, [
        agentId,
        leaseMs,
        place,
        batch,
        scope.folders,
        scope.sharedFolders,
      ]);
      for (const r of taken) {
        const id = r['id'] as number;
        this.held.set(id, r['epoch'] as number);
        previous.set(id, (r['previous_owner'] as string | null) ?? undefined);
      }
      if (taken.length < batch) break;
    }
    if (previous.size === 0) return [];
    const steps = await this.planOf([...previous.keys()], options);
    return steps.map((step) => ({ ...step, previousOwner: previous.get(step.item.id) }));
  }

  /** The content was sent before from this very file, and the file has gone since (ClaimInput.stillThere). */
  private async sameFileGone(earlier: JournalItem, input: ClaimInput): Promise<boolean> {
    const sameFile =
      earlier.claimedPath === input.claimedPath &&
      earlier.size === input.size &&
      earlier.mtimeMs === input.mtimeMs;
    return sameFile && input.stillThere !== undefined && !(await input.stillThere());
  }

  async takeOverCopy(
    fileId: number,
    claimedPath: string,
    options: RecoveryOptions = {},
  ): Promise<TakenOver[]> {
    if (!this.lease) return [];
    const { agentId, leaseMs, place } = this.lease;
    const taken = await this.db.one('takeOverCopy', S.takeOverCopy, [
      agentId,
      leaseMs,
      fileId,
      place,
      claimedPath,
    ]);
    if (!taken) return [];
    this.held.set(fileId, taken['epoch'] as number);
    const previousOwner = (taken['previous_owner'] as string | null) ?? undefined;
    return (await this.planOf([fileId], options)).map((step) => ({ ...step, previousOwner }));
  }

  async leaseForSend(target: Pick<JournalItem, 'id' | 'parentId'>): Promise<number | undefined> {
    if (!this.lease) return undefined;
    const { agentId, leaseMs, sendMarginMs } = this.lease;
    const fileId = target.parentId ?? target.id;
    const itemId = target.id;
    // Set within the last margin (a create right after its claim, a file's rows one after another):
    // the lease still has more than it would leave a create after a renewal less a margin.
    // Not once closing has begun: close() ends the leases.
    const setAt = this.held.has(fileId) && !this.closed ? this.leaseSetAt.get(fileId) : undefined;
    const since = setAt === undefined ? Number.POSITIVE_INFINITY : this.monotonicNow() - setAt;
    if (since < sendMarginMs) return Math.floor(leaseMs - sendMarginMs - since);
    const asked = this.monotonicNow();
    const rows = await this.db.rows('leaseForSend', S.renewForSend, [
      agentId,
      leaseMs,
      fileId,
      this.epochOf(fileId),
    ]);
    if (rows.length === 0) throw await this.missedWrite(fileId);
    this.leaseSetAt.set(fileId, asked);
    // The lease ends leaseMs after the database's now(), which came after `asked`: counting from
    // `asked` on this host's monotonic clock ends the request early, never late.
    const allowed = Math.floor(leaseMs - sendMarginMs - (this.monotonicNow() - asked));
    if (allowed < sendMarginMs) {
      throw new DocexError(
        'DOCEX_JOURNAL_UNAVAILABLE',
        `the journal took ${Math.round(this.monotonicNow() - asked)} ms to renew a lease of ${leaseMs} ms: too slow to send a create safely; tried again later`,
        { details: { itemId, leaseMs } },
      );
    }
    return allowed;
  }

  placeAlone<T>(target: Pick<JournalItem, 'id' | 'parentId' | 'epoch'>, place: () => Promise<T>): Promise<T> {
    if (!this.lease) return place();
    const { agentId, place: here } = this.lease;
    const fileId = target.parentId ?? target.id;
    // A file refused or rejected is final, so no longer held (renewLeases skips it), yet still this
    // agent's by the epoch it finished with: its copy is placed, unless another agent holds it.
    const epoch = this.held.get(fileId) ?? (target.parentId === undefined ? target.epoch : -1);
    return this.track(
      this.db.transaction('placeAlone', async (tx) => {
        const lock = await tx.one(S.placementLock, [
          LOCK_SPACE.placement,
          Number(BigInt.asIntN(32, BigInt(fileId))),
        ]);
        if (lock?.['got'] !== true) {
          throw new DocexError(
            'DOCEX_PLACEMENT_BUSY',
            'another agent on the journal is placing its copy of this file now: this copy waits',
            { details: { itemId: fileId } },
          );
        }
        const held = await tx.rows(S.stillHeld, [agentId, fileId, epoch]);
        if (held.length === 0) {
          // Finished by an earlier start of this agent, which stopped before placing its copy.
          const earlier = await tx.rows(S.finalOfEarlierStart, [agentId, fileId, here]);
          if (earlier.length === 0) throw await this.missedWrite(fileId);
        }
        return place();
      }),
    );
  }

  private monotonicNow(): number {
    return this.lease?.monotonicNow?.() ?? performance.now();
  }

  private forgetHold(fileId: number): boolean {
    this.leaseSetAt.delete(fileId);
    this.newUploadUrls.delete(fileId);
    return this.held.delete(fileId);
  }

  /** The epoch this agent holds the file by, for a fenced statement (null: not fenced; -1: not held). */
  private epochOf(fileId: number): number | null {
    if (!this.lease) return null;
    return this.held.get(fileId) ?? -1;
  }

  /** A fenced statement changed no row: the lease is lost, or the item does not exist. */
  private async missedWrite(itemId: number): Promise<DocexError> {
    const holder = await this.db.one('holderOf', S.holderOf, [itemId]);
    if (!holder) return unknownItem(itemId);
    const fileId = holder['id'] as number;
    this.letGo(fileId, holder);
    return leaseLost(fileId, holder['owner']);
  }

  /**
   * This agent no longer holds the file: it forgets it, and says so once (whichever finds it first,
   * a renewal or a write). Answers whether it still held it until now.
   */
  private letGo(fileId: number, file: Row | undefined): boolean {
    if (!this.forgetHold(fileId)) return false;
    const owner = file?.['owner'];
    this.log.warn(
      {
        folder: file?.['folder'],
        file: file?.['file_name'],
        itemId: fileId,
        owner: typeof owner === 'string' ? owner : undefined,
        code: 'DOCEX_LEASE_LOST',
      },
      'lease lost: another agent took the file over; this agent stopped touching it',
    );
    return true;
  }

  /** Checks, under the file's row lock, that this agent holds the file by its epoch. */
  private fence(file: Row): void {
    if (!this.lease) return;
    const fileId = file['id'] as number;
    if (file['owner'] === this.lease.agentId && this.held.get(fileId) === file['epoch']) return;
    this.letGo(fileId, file);
    throw leaseLost(fileId, file['owner']);
  }

  async get(itemId: number): Promise<JournalItem | undefined> {
    const row = await this.db.one('get', S.get, [itemId]);
    if (!row) return undefined;
    const read = item(row);
    this.saw(read);
    return read;
  }

  async byJobId(jobId: string): Promise<JournalItem | undefined> {
    const row = await this.db.one('byJobId', S.byJobId, [jobId]);
    return row ? item(row) : undefined;
  }

  async byPath(path: string): Promise<JournalItem[]> {
    return (await this.db.rows('byPath', S.byPath, [path])).map(item);
  }

  async rowsOf(fileId: number): Promise<JournalItem[]> {
    return (await this.db.rows('rowsOf', S.rowsOf, [fileId])).map(item);
  }

  async recent(limit = 50): Promise<JournalItem[]> {
    return (await this.db.rows('recent', S.recent, [limit])).map(item);
  }

  async unfinished(): Promise<JournalItem[]> {
    return (await this.db.rows('unfinished', S.unfinished)).map(item);
  }

  /**
   * The unfinished items and their rows' states from one snapshot. With leases: the files this
   * agent takes over now (every file no live agent holds) and their rows.
   */
  async recoveryPlan(options: RecoveryOptions & { scope?: TakeOverScope } = {}): Promise<RecoveryStep[]> {
    if (this.lease) {
      const { scope, ...rest } = options;
      return scope ? this.takeOverFiles(scope, rest) : [];
    }
    return this.planOf(undefined, options);
  }

  /** The plan of the files `fileIds` and their rows (undefined: every unfinished item). */
  private async planOf(only: number[] | undefined, options: RecoveryOptions): Promise<RecoveryStep[]> {
    const now = this.clock.now();
    const { items, children } = await this.db.transaction(
      'recoveryPlan',
      async (tx) => {
        const items = (
          await (only === undefined ? tx.rows(S.unfinished) : tx.rows(S.unfinishedOf, [only]))
        ).map(item);
        const fileIds = items.filter((i) => i.kind === 'file').map((i) => i.id);
        const children = new Map<number, ItemState[]>();
        if (fileIds.length > 0) {
          for (const r of await tx.rows(S.childStatesOf, [fileIds])) {
            const parentId = r['parent_id'] as number;
            children.set(parentId, [...(children.get(parentId) ?? []), r['state'] as ItemState]);
          }
        }
        return { items, children };
      },
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
    return items.map((i) => ({
      item: i,
      action: recoveryAction({ ...i, childStates: children.get(i.id) ?? [] }, now, options),
    }));
  }

  async history(itemId: number): Promise<HistoryEntry[]> {
    return (await this.db.rows('history', S.history, [itemId])).map(historyEntryOf);
  }

  async stats(): Promise<JournalStats> {
    const zero = () => Object.fromEntries(ITEM_STATES.map((s) => [s, 0])) as Record<ItemState, number>;
    const stats: JournalStats = { files: zero(), rows: zero(), unfinished: 0 };
    for (const r of await this.db.rows('stats', S.counts)) {
      const state = r['state'] as ItemState;
      const n = r['n'] as number;
      (r['kind'] === 'file' ? stats.files : stats.rows)[state] = n;
      if (!isFinal(state)) stats.unfinished += n;
    }
    return stats;
  }

  inspectionStarting(path: string): Promise<void> {
    return this.track(
      this.db
        .rows('inspectionStarting', S.inspectionStarting, [path, this.clock.now()])
        .then(() => undefined),
    );
  }

  inspectionEnded(path: string): Promise<void> {
    return this.track(this.db.rows('inspectionEnded', S.inspectionEnded, [path]).then(() => undefined));
  }

  async interruptedInspections(path: string, startedBefore = Number.MAX_SAFE_INTEGER): Promise<number> {
    const n = (
      await this.db.one('interruptedInspections', S.interruptedInspections, [path, startedBefore])
    )?.['n'];
    return typeof n === 'number' ? n : 0;
  }

  /**
   * One batch of pruning, as SQLite's: the finished files among ids (afterId, afterId + scanIds]
   * last moved before `cutoffMs`, locked FOR UPDATE (a row's move waits, then finds its row gone).
   * A done file keeps its own row; its history and payload rows go. A rejected file goes whole.
   */
  pruneFinished(cutoffMs: number, afterId: number, scanIds: number): Promise<PruneBatch> {
    const upTo = afterId + Math.max(1, scanIds);
    return this.write('pruneFinished', async (tx) => {
      const batch: PruneBatch = { items: 0, rows: 0, history: 0, next: undefined };
      const ids = (await tx.rows(S.pruneCandidates, [afterId, upTo, cutoffMs])).map((r) => r['id'] as number);
      if (ids.length > 0) {
        const counted = async (statement: typeof S.pruneRows) =>
          new Map((await tx.rows(statement, [ids])).map((r) => [r['id'] as number, r['n'] as number]));
        const rowsHistory = await counted(S.pruneRowsHistory);
        const ownHistory = await counted(S.pruneHistory);
        const rows = await counted(S.pruneRows);
        const removed = new Set((await tx.rows(S.pruneItems, [ids])).map((r) => r['id'] as number));
        for (const id of ids) {
          const h = (rowsHistory.get(id) ?? 0) + (ownHistory.get(id) ?? 0);
          const r = rows.get(id) ?? 0;
          if (h + r > 0 || removed.has(id)) batch.items++;
          batch.history += h;
          batch.rows += r;
        }
      }
      const maxId = ((await tx.one(S.maxId))?.['id'] as number | null) ?? 0;
      batch.next = upTo < maxId ? upTo : undefined;
      return batch;
    });
  }

  /**
   * Waits for the writes in flight, ends the leases of the files this agent holds (another agent
   * takes them at once; a restart of this one takes them back), then closes the pool.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    if (this.lease) {
      await this.db
        .rows('releaseLeases', S.releaseLeases, [this.lease.agentId])
        .catch((err: unknown) =>
          this.log.warn(
            { err },
            'leases not released: other agents take this agent’s files once they run out',
          ),
        );
    }
    await this.db.end();
  }

  /** A writing transaction; its history entries go in last (see HistoryBatch). */
  private write<T>(
    doing: string,
    fn: (tx: Tx, history: HistoryBatch) => Promise<T>,
    begin?: BeginStatement,
  ): Promise<T> {
    return this.track(
      this.db.transaction(
        doing,
        async (tx) => {
          const history = new HistoryBatch();
          const result = await fn(tx, history);
          await history.insert(tx);
          return result;
        },
        begin,
      ),
    );
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }
}

/**
 * $1–$24 of insertFile and claimFile: the file as its claim inserts it, a duplicate of `earlier`
 * when given; else refused (no route takes it), or claimed and, when it was validated before the
 * claim, on to its create intent.
 */
function fileValues(
  input: ClaimInput,
  now: number,
  lease: { agentId: string; leaseMs: number } | undefined,
  earlier: JournalItem | undefined,
): unknown[] {
  const refused = earlier ? undefined : input.refused;
  const state: ItemState = earlier || refused ? 'rejected' : 'claimed';
  const moves: ClaimMove[] = [
    {
      from: null,
      to: state,
      detail: earlier
        ? { code: 'DOCEX_DUPLICATE', duplicateOf: earlier.id }
        : refused
          ? { code: refused.code, reason: refused.reason }
          : { size: input.size, sha256: input.sha256 },
    },
  ];
  const create = state === 'claimed' && input.validatedNote !== undefined ? firstCreate(input) : undefined;
  if (create) moves.push(...validatedToCreating(input.validatedNote!, create));
  return [
    input.folder,
    input.workflowId,
    input.mode,
    input.fileName,
    input.sourcePath,
    input.claimedPath,
    input.size,
    input.mtimeMs,
    input.sha256,
    input.allowDuplicates === true,
    moves[moves.length - 1]!.to,
    earlier ? 'DOCEX_DUPLICATE' : (refused?.code ?? null),
    earlier ? duplicateReason(earlier) : (refused?.reason ?? null),
    earlier?.id ?? null,
    now,
    lease?.agentId ?? null,
    lease?.leaseMs ?? null,
    moves.map((m) => m.from),
    moves.map((m) => m.to),
    moves.map((m) => detailText(m.detail)),
    create?.attempt ?? 0,
    create?.jobName ?? null,
    input.managedCompanyId ?? null,
    input.relativePath ?? null,
  ];
}
