/**
 * The pipeline: files claimed into `.processing/` driven to done, rejected or parked. It is a
 * composition of parts, each with one job: the scheduler (which file runs when, concurrency per
 * folder and across folders), recovery (what a crash left, taken back at start), the retry timers
 * (the retry policy's wait or give-up after a failed try) and the orphan-sidecar watcher. Here the
 * per-file steps are chosen by mode and their outcome handed to the part it concerns, so a crash
 * at any moment loses nothing and submits nothing twice.
 */
import fs from 'node:fs/promises';
import { sharedAbortController } from '../core/abort.js';
import { GarbagePacer } from '../core/collect.js';
import { type DocexError, isDocexError } from '../core/errors.js';
import { FOLDER_UNSAFE_CODE } from '../core/real-dir.js';
import type { Workflow } from '../domain/wire.js';
import { isFinal, type JournalItem } from '../journal/index.js';
import { kindOf } from '../sources/kinds.js';
import { CallSlots } from './call-slots.js';
import { FreshIntents } from './fresh-intents.js';
import { type IntakeFile, intakeItem } from './intake.js';
import { type Inspector, sharedInspector } from './isolate/inspector.js';
import { JournalOutage } from './journal-outage.js';
import { OrphanSidecars } from './orphan-sidecars.js';
import { parkItem } from './park.js';
import { drivePayloadPdf } from './payload-pdf.js';
import { drivePayloadWord } from './payload-word.js';
import {
  type RecoveryDeps,
  type RecoverySummary,
  reclaimOrphans,
  recoverUnfinished,
  resumeTakenOver,
  takeOverScope,
} from './recovery.js';
import { RetryTimers } from './retry-timers.js';
import { companyOf } from './routes.js';
import { LOOKAHEAD, priorityOf, Scheduler } from './scheduler.js';
import { SEND_WINDOW_CODE, SendWindowHolds, WindowClosed, type WindowHeld } from './send-windows.js';
import { isSidecarName, usesSidecars } from './sidecar.js';
import { driveSingleFile } from './single-file.js';
import type { FolderRuntime, HeldFile, StepContext } from './types.js';
import { VerdictCache } from './verdicts.js';

export type { RecoverySummary } from './recovery.js';

/**
 * A full GC after this many files driven to their end (core/collect.ts GarbagePacer): each file's
 * objects (its bytes, its journal rows, its requests) live across its awaits and reach the old
 * generation, which V8 collected only once it had grown: through a backlog's drain the agent's
 * heap grew from 45 to 89 MB in a minute (20,000-file backlog, 7,000 files), its resident set by
 * 1-2 MB a second. A collection every 500 files kept the heap at 55 MB (issue 30's probe, load
 * average 8-10: 110 ms each); every 1,000 halves that cost, about 1 % of the CPU a file takes.
 */
export const COLLECT_EVERY_FILES = 1_000;

export interface PipelineOptions
  extends Omit<StepContext, 'signal' | 'intents' | 'held' | 'inspector' | 'callSlots'> {
  /** The isolated inspector; one with the default limits when absent. */
  inspector?: Inspector;
  /** Read live: a reload adds and removes folders in this map (see Agent.addFolder/removeFolder). */
  folders: ReadonlyMap<string, FolderRuntime>;
  /** Service calls in flight across all folders (config.concurrency); twice as many files run (scheduler.ts). */
  concurrency: number;
  /** Called when a folder's backlog crosses its high (true) or low (false) mark: pause/resume intake. */
  onBacklog?: (folder: string, full: boolean) => void;
  /** Wait before try number `n` (1-based) of a file that must wait. Default 1 s doubling, at most 60 s. */
  retryDelayMs?: (n: number) => number;
  /** How often a folder holding files for its send window looks at the clock again (default 60 s). */
  windowRecheckMs?: number;
  /** Files driven to their end between two full GCs (tests: fewer). Default COLLECT_EVERY_FILES. */
  collectEveryFiles?: number;
  /** Told when a file item became done or rejected (SFTP sources then move the remote file). */
  onFinished?: (item: JournalItem) => void;
  /** Told when this agent left a file to another agent (an SFTP source then forgets its copy). */
  onLeft?: (item: JournalItem) => void;
  /** Told of files taken over from another agent with a copy of this agent's (SFTP adoption). */
  onTakenOver?: (files: number) => void;
  /**
   * A folder the agent writes into proved not a real directory while running (DOCEX_FOLDER_UNSAFE):
   * the folder's work halts here (it stays in the journal and `.processing/`, taken up again when
   * the folder starts again) and the caller stops the folder. Without it, such a file waits and retries.
   */
  onFolderUnsafe?: (folder: string, err: DocexError) => void;
  /**
   * Fetches a workflow record (as a managed company): that of an item whose recorded workflow no
   * route of its folder names any more (the routes changed since its claim) is fetched once, so
   * its checks are against its own workflow, in its own mode. Without it: the folder's workflow.
   */
  fetchWorkflow?: (workflowId: string, managedCompanyId?: string) => Promise<Workflow>;
}

/** Beyond the time limit: the record's write and another host's clock. */
const INSPECTION_RECORD_MARGIN_MS = 10_000;

export class Pipeline {
  private readonly scheduler: Scheduler;
  private readonly retries: RetryTimers;
  private readonly windows: SendWindowHolds;
  private readonly orphans: OrphanSidecars;
  private readonly outage: JournalOutage;
  /** Folders whose backlog is over its high mark (the scheduler says). */
  private readonly backlogFull = new Set<string>();
  /** Folders whose intake this pipeline paused: a full backlog, or the journal not answering. */
  private readonly paused = new Set<string>();
  // One signal shared by every call in flight (concurrency of them, up to 256).
  private readonly abort = sharedAbortController();
  private readonly held = new Map<number, HeldFile>();
  /**
   * Files this agent moved into `.processing/` and has not recorded yet (queued, inspected, or
   * kept through a journal outage): never orphans to its own scan, however long they wait. By
   * claimed path, with the folder: a folder removed while its files were queued drops its entries.
   */
  private readonly claiming = new Map<string, string>();
  /** Claims handed to the scheduler so far: each one's task key. */
  private claims = 0;
  private readonly ctx: StepContext;
  /** Workflow records of items no route names any more, by folder, company and workflow. */
  private readonly recordedWorkflows = new Map<string, Promise<Workflow>>();
  private readonly idleWaiters: Array<() => void> = [];
  private readonly pacer: GarbagePacer;

  constructor(private readonly options: PipelineOptions) {
    this.pacer = new GarbagePacer(options.collectEveryFiles ?? COLLECT_EVERY_FILES, 'major');
    this.ctx = {
      ...options,
      inspector: options.inspector ?? sharedInspector(),
      signal: this.abort.signal,
      held: this.held,
      verdicts: options.verdicts ?? new VerdictCache({ clock: options.clock }),
      intents: new FreshIntents(),
      callSlots: new CallSlots(
        options.concurrency,
        (folder) => options.folders.get(folder)?.config.concurrency ?? 1,
      ),
    };
    this.scheduler = new Scheduler({
      concurrency: options.concurrency,
      lookahead: LOOKAHEAD,
      folders: options.folders,
      onBacklog: (folder, full) => {
        if (full) this.backlogFull.add(folder);
        else this.backlogFull.delete(folder);
        this.pauseOrResume(folder);
      },
      onTaskError: (folder, err) => {
        if (!this.haltUnsafe(folder, err)) options.log.error({ folder, err }, 'file step failed');
      },
      onSettled: () => this.notifyIdle(),
    });
    const retryDelay = options.retryDelayMs ? { retryDelayMs: options.retryDelayMs } : {};
    this.retries = new RetryTimers({
      journal: options.journal,
      clock: options.clock,
      log: options.log,
      ...retryDelay,
      resume: (itemId) => this.resume(itemId),
      onFired: () => this.notifyIdle(),
    });
    this.windows = new SendWindowHolds({
      journal: options.journal,
      clock: options.clock,
      log: options.log,
      folders: options.folders,
      ...(options.windowRecheckMs === undefined ? {} : { recheckMs: options.windowRecheckMs }),
      resume: (itemId) => this.resume(itemId),
      onReleased: () => this.notifyIdle(),
    });
    this.orphans = new OrphanSidecars({ clock: options.clock, log: options.log, ...retryDelay });
    this.outage = new JournalOutage({
      journal: options.journal,
      clock: options.clock,
      log: options.log,
      onChange: (down) => {
        for (const folder of this.options.folders.keys()) this.pauseOrResume(folder);
        // The kept steps run right after this; once they are queued, idle waiters may look again.
        if (!down) queueMicrotask(() => this.notifyIdle());
      },
    });
  }

  /** Whether the journal's database does not answer now (intake paused, work kept for later). */
  get journalDown(): boolean {
    return this.outage.down;
  }

  /** Tells the folder's source to pause or resume when what should be differs from what is. */
  private pauseOrResume(folder: string): void {
    const pause = this.backlogFull.has(folder) || this.outage.down;
    if (pause === this.paused.has(folder)) return;
    if (pause) this.paused.add(folder);
    else this.paused.delete(folder);
    this.options.onBacklog?.(folder, pause);
  }

  /** Files wait in a folder to settle: the inspection worker their intake needs starts meanwhile. */
  prepareIntake(): void {
    this.ctx.inspector.warm();
  }

  /**
   * A file the source just moved into `.processing/`. False: not taken (unknown folder, stopping);
   * `onLost`: taken, but its claim failed before it became an item (SFTP sources forget it then).
   */
  accept(folder: string, file: IntakeFile, onLost?: (err: unknown) => void): boolean {
    const runtime = this.options.folders.get(folder);
    if (!runtime) {
      this.options.log.error({ folder, file: file.name }, 'file of an unknown folder left in .processing');
      return false;
    }
    if (isSidecarName(runtime, file.name)) {
      // Not an item of its own: its PDF's item reads it from .processing and moves it along.
      this.options.log.debug({ folder, file: file.name }, 'sidecar waits for its PDF');
      if (usesSidecars(runtime)) this.orphans.watch(runtime, file);
      return true;
    }
    // Handed over again while its claim is not recorded yet (the orphan scan, recovery): taken once.
    if (this.claiming.has(file.claimedPath)) return true;
    this.claiming.set(file.claimedPath, folder);
    // A key of this claim's own, not its path's: a new file claimed at the path of one whose work
    // is still settling (moved to the archive, its done not written yet) is a file of its own.
    const queued = this.scheduler.schedule(
      runtime,
      `claim:${++this.claims}`,
      priorityOf(undefined, this.options.clock.now(), runtime.config.priority),
      async () => {
        let item: JournalItem;
        try {
          const intake = await intakeItem(this.ctx, runtime, file);
          this.claiming.delete(file.claimedPath);
          if (intake.sameDrop) return await this.secondCopy(runtime, file, intake.item, onLost);
          item = intake.item;
        } catch (err) {
          // Left in .processing (still this agent's own, never an orphan to its scan): taken again
          // once the journal answers (or by recovery at start).
          const again = () => {
            this.claiming.delete(file.claimedPath);
            this.accept(folder, file, onLost);
          };
          if (this.outage.absorb(err, again)) return;
          this.claiming.delete(file.claimedPath);
          onLost?.(err);
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
            // Nothing recorded, nothing here to lose: on a shared folder another agent took it as an orphan.
            this.options.log.info(
              { folder, file: file.name },
              'file gone from .processing before it was recorded: left to whoever moved it',
            );
            return;
          }
          throw err;
        }
        try {
          if (this.heldElsewhere(item)) return;
          await this.drive(runtime, item, false);
        } finally {
          this.held.delete(item.id);
        }
      },
    );
    if (!queued) this.claiming.delete(file.claimedPath);
    return queued;
  }

  /**
   * A second copy of a drop already recorded: the agent that recorded a remote file died or froze
   * after this one took the remote file over (or another agent took a shared folder's file as an
   * orphan and finished it while this one could not record it). Final: nothing left to do but the
   * remote move. Unfinished: taken over with this copy once no live agent holds it; until then the
   * copy goes (`onLost`), and the source, if it holds the remote file, takes it again next poll.
   */
  private async secondCopy(
    runtime: FolderRuntime,
    file: IntakeFile,
    recorded: JournalItem,
    onLost: ((err: unknown) => void) | undefined,
  ): Promise<void> {
    const { journal, uploadMarginMs } = this.ctx;
    const fields = { folder: recorded.folder, file: recorded.fileName, itemId: recorded.id };
    // A spool copy is this agent's own; a shared folder's path may hold a new drop by now.
    const ownCopy = kindOf(runtime.config.source).remote;
    if (isFinal(recorded.state)) {
      if (ownCopy) await fs.rm(file.claimedPath, { force: true });
      this.options.log.info(
        { ...fields, state: recorded.state },
        'file recorded and finished before (the same drop): nothing left to do',
      );
      this.options.onFinished?.(recorded);
      return;
    }
    // This agent drives it already (the copy is the one it holds).
    if (journal.holds(recorded.id)) return;
    const steps = await journal.takeOverCopy(recorded.id, file.claimedPath, { marginMs: uploadMarginMs });
    if (steps.length > 0) {
      this.options.onTakenOver?.(resumeTakenOver(this.recoveryDeps(), steps));
      return;
    }
    // Not kept: the source downloads the file again while it holds the remote file.
    if (ownCopy) await fs.rm(file.claimedPath, { force: true });
    this.options.log.info({ ...fields, owner: recorded.owner }, 'file held by another agent: left to it');
    onLost?.(undefined);
  }

  /** Resumes a journal item (a retry after a wait). */
  resume(itemId: number, rehash = false): void {
    this.options.journal.get(itemId).then(
      (item) => {
        if (item) this.resumeItem(item, rehash);
      },
      (err: unknown) => {
        if (this.outage.absorb(err, () => this.resume(itemId, rehash))) return;
        this.options.log.error({ itemId, err }, 'item could not be read to resume it');
      },
    );
  }

  /**
   * Resumes an item as read from the journal: driven now, or, when a failed try left it waiting
   * (before a restart too), once its wait is over.
   */
  private resumeItem(item: JournalItem, rehash: boolean): void {
    const runtime = this.options.folders.get(item.folder);
    if (!runtime) {
      this.options.log.warn(
        { folder: item.folder, file: item.fileName, itemId: item.id },
        'folder not running; item left',
      );
      return;
    }
    this.scheduler.schedule(
      runtime,
      `item:${item.id}`,
      priorityOf(item, this.options.clock.now(), runtime.config.priority),
      async () => {
        let fresh: JournalItem | undefined;
        try {
          fresh = await this.options.journal.get(item.id);
        } catch (err) {
          if (this.outage.absorb(err, () => this.resumeItem(item, rehash))) return;
          throw err;
        }
        if (fresh && !this.heldElsewhere(fresh)) await this.drive(runtime, fresh, rehash);
      },
    );
  }

  /** Several agents on one journal: another agent holds the file, so this one leaves it alone. */
  private heldElsewhere(item: JournalItem): boolean {
    if (this.options.journal.holds(item.id)) return false;
    this.options.log.info(
      { folder: item.folder, file: item.fileName, itemId: item.id, owner: item.owner },
      'file held by another agent: left to it',
    );
    this.options.onLeft?.(item);
    return true;
  }

  /**
   * Files left in `.processing/` and unfinished journal items, resumed (call before sources start).
   * `only`: one folder's (a folder added by a reload, or started again after it was found unsafe).
   */
  recover(only?: string): Promise<RecoverySummary> {
    if (only !== undefined) this.scheduler.release(only);
    return recoverUnfinished(this.recoveryDeps(), only);
  }

  /**
   * Several agents on one journal: takes over the files of the running folders that no live agent
   * holds any more (up to `limit`), and the files of shared folders' `.processing/` that no item
   * stands for and that were moved in `orphanAgeMs` ago or more. Answers the files taken over.
   */
  async takeOver(limit: number, orphanAgeMs: number): Promise<{ takenOver: number; orphans: number }> {
    const { journal, uploadMarginMs } = this.ctx;
    const items = await journal.takeOverFiles(takeOverScope(this.options.folders.values()), {
      marginMs: uploadMarginMs,
      limit,
    });
    const deps = this.recoveryDeps();
    const takenOver = resumeTakenOver(deps, items);
    const now = Date.now();
    const orphans = await reclaimOrphans(
      deps,
      // File times are finer than Date.now()'s milliseconds: a file changed in this millisecond is 0 ms old.
      (file) => now - Math.floor(file.ctimeMs) >= orphanAgeMs && !this.claiming.has(file.path),
      // A live agent's inspection is over within its time limit (the worker is stopped then).
      this.options.clock.now() - this.ctx.inspector.limits.timeLimit - INSPECTION_RECORD_MARGIN_MS,
    );
    return { takenOver, orphans };
  }

  private recoveryDeps(): RecoveryDeps {
    return {
      ctx: this.ctx,
      folders: this.options.folders,
      accept: (folder, file) => this.accept(folder, file),
      resume: (item, rehash) => {
        // A file held for its send window is held again by its drive, until the window opens.
        if (item.lastFailureCode === SEND_WINDOW_CODE || !this.retries.resumeAt(item))
          this.resumeItem(item, rehash);
      },
    };
  }

  /** Files queued or running, all folders. */
  get size(): number {
    return this.scheduler.size;
  }

  /** Each folder holding files until its send window opens (none: empty). */
  heldForWindow(): WindowHeld[] {
    return this.windows.heldByFolder();
  }

  /**
   * A folder removed by a reload: its waiting files' retry timers are cancelled (they stay in the
   * journal and `.processing/`; a folder started again on that name recovers them, so no old timer
   * drives them beside it), then this resolves once nothing of the folder is queued or running, and
   * the folder's bookkeeping is dropped (it would otherwise grow with every reload).
   */
  async folderIdle(folder: string): Promise<void> {
    await this.scheduler.drain(folder, () => {
      this.retries.cancel(folder);
      this.windows.cancel(folder);
      this.orphans.cancel(folder);
    });
    // Queued work of a halted folder settles without running: its files were never recorded and
    // stay in .processing/, for the others' scans and this folder's next start.
    for (const [claimedPath, owner] of this.claiming) if (owner === folder) this.claiming.delete(claimedPath);
    this.notifyIdle();
  }

  /**
   * Folders the scheduler holds state for, files waiting for a retry, and files moved into
   * `.processing/` whose claim is not recorded yet (tests, diagnostics).
   */
  tracked(): { folders: string[]; waiting: number; claiming: number } {
    return {
      folders: this.scheduler.folders(),
      waiting: this.retries.waiting + this.windows.waiting + this.orphans.watched + this.outage.waiting,
      claiming: this.claiming.size,
    };
  }

  /** Resolves once nothing is queued, running, waiting for a retry or for the journal (tests, one-shot submit). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stop: nothing new starts, retries are cancelled, queued work is dropped (it stays in the
   * journal and `.processing/`), running work gets `graceMs`, then its requests are aborted.
   */
  stop(graceMs: number): Promise<{ finished: boolean }> {
    this.retries.cancelAll();
    this.windows.cancelAll();
    this.outage.stop();
    this.orphans.stop();
    return this.scheduler.stop(graceMs, () => this.abort.abort());
  }

  private async drive(runtime: FolderRuntime, item: JournalItem, rehash: boolean): Promise<void> {
    // Held for its send window before a restart (or a reload), and the window still closed.
    if (this.windows.holdsAgain(runtime, item)) return;
    let settledBefore = 0;
    try {
      settledBefore = await this.settledRows(item);
      const own = await this.withRecordedWorkflow(runtime, item);
      let final: JournalItem;
      if (item.mode === 'payload-word') final = await drivePayloadWord(this.ctx, own, item, { rehash });
      else if (item.mode === 'single-file') final = await driveSingleFile(this.ctx, own, item, { rehash });
      else final = await drivePayloadPdf(this.ctx, own, item, { rehash });
      await this.retries.reset(final);
      this.options.log.debug(
        { folder: item.folder, file: item.fileName, state: final.state },
        'file finished',
      );
      if (isFinal(final.state)) {
        this.ctx.intents.forget(item.id);
        this.options.onFinished?.(final);
        this.pacer.passed(1);
      }
    } catch (err) {
      if (this.scheduler.stopping) return;
      if (isDocexError(err, 'DOCEX_LEASE_LOST')) {
        // Another agent took the file over (the journal said so): nothing here may touch it again.
        this.ctx.intents.forget(item.id);
        this.options.log.info(
          { folder: item.folder, file: item.fileName, itemId: item.id, code: err.code },
          'file held by another agent: left to it',
        );
        this.options.onLeft?.(item);
        return;
      }
      // Not a failure: no job may be created before the folder's send window opens.
      if (err instanceof WindowClosed) {
        await this.windows.hold(item, err.opensAt);
        return;
      }
      // Not the file's failure: it is driven again, from what the journal holds, once it answers.
      if (this.outage.absorb(err, () => this.resume(item.id, rehash))) return;
      if (this.haltUnsafe(item.folder, err)) {
        await this.retries.reset(item);
        this.options.log.warn(
          { folder: item.folder, file: item.fileName, state: item.state, code: FOLDER_UNSAFE_CODE },
          'file left where it is: its folder stopped',
        );
        return;
      }
      // A try that moved a row forward was not stuck: its file's count of failed tries starts
      // again, so a file of many rows under a flaky service never walks into the give-up limit or
      // the longest wait while it makes progress. Rows are finite, so this cannot loop forever.
      const progressed = (await this.settledRows(item)) > settledBefore;
      if (progressed) await this.retries.reset(item);
      const tries = { ...item, failedTries: progressed ? 0 : item.failedTries };
      await this.retries.failed(tries, err, (reason) => this.park(runtime, item, reason));
    }
  }

  /**
   * The folder as an item is driven in: with the record of the workflow recorded at its claim,
   * fetched (once, as its company) when no route of the folder names it any more.
   */
  private async withRecordedWorkflow(runtime: FolderRuntime, item: JournalItem): Promise<FolderRuntime> {
    const id = item.workflowId;
    const fetch = this.options.fetchWorkflow;
    if (!fetch || id === runtime.config.workflowId || runtime.workflows?.has(id)) return runtime;
    const company = companyOf(runtime, item);
    const key = JSON.stringify([runtime.config.name, company ?? '', id]);
    let record = this.recordedWorkflows.get(key);
    if (!record) {
      record = fetch(id, company);
      this.recordedWorkflows.set(key, record);
      // A failed fetch is tried again at the item's next try.
      record.catch(() => this.recordedWorkflows.delete(key));
    }
    const workflow = await record;
    return { ...runtime, workflows: new Map([...(runtime.workflows ?? []), [id, workflow]]) };
  }

  /** Rows of the file (payload-word rows, payload-pdf documents) that have their job or are final. */
  private async settledRows(item: JournalItem): Promise<number> {
    if (item.mode === 'single-file') return 0;
    let settled = 0;
    for (const row of await this.options.journal.rowsOf(item.id)) {
      if (row.jobId !== undefined || isFinal(row.state)) settled++;
    }
    return settled;
  }

  /** True when `err` says a folder the agent writes into is unsafe and the folder was halted for it. */
  private haltUnsafe(folder: string, err: unknown): boolean {
    const onUnsafe = this.options.onFolderUnsafe;
    if (!onUnsafe || this.scheduler.stopping || !isDocexError(err, FOLDER_UNSAFE_CODE)) return false;
    if (this.scheduler.halt(folder)) onUnsafe(folder, err);
    return true;
  }

  /** The retry policy gave up on the file: to the error folder with what became of each document. */
  private async park(runtime: FolderRuntime, item: JournalItem, reason: string): Promise<boolean> {
    const fresh = await this.options.journal.get(item.id);
    if (!fresh) return false;
    try {
      const parked = await parkItem(this.ctx, runtime, fresh, reason);
      if (!parked) return false;
      this.ctx.intents.forget(item.id);
      this.options.onFinished?.(parked);
      return true;
    } catch (parkErr) {
      this.options.log.error(
        { folder: item.folder, file: item.fileName, err: parkErr },
        'file could not be parked',
      );
      return false;
    }
  }

  private isIdle(): boolean {
    return (
      this.scheduler.size === 0 &&
      this.retries.waiting === 0 &&
      this.windows.waiting === 0 &&
      this.outage.waiting === 0
    );
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
