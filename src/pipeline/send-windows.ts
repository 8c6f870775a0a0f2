/**
 * A folder's send window (`window`) in the pipeline: no job is created while it is closed. The
 * create steps ask `checkSendWindow` right before recording an intent or sending one; a closed
 * window throws WindowClosed, and the pipeline hands the file to SendWindowHolds instead of the
 * retry timers. Everything before the create (claim, content checks, rows) has run, so a bad file
 * is refused at once. The hold is recorded on the file (its next-try columns: the code
 * DOCEX_SEND_WINDOW_CLOSED, the opening as its next try), so `status` tells why it waits and a
 * restarted agent holds it again. One timer per folder, not per file: at the opening every held
 * file of the folder is driven again, under the scheduler's concurrency, and a single file's job
 * is created and uploaded in one go. The timer also looks again every `recheckMs`, so a clock that
 * jumps (or a test's moved clock) is followed.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { isOpen, nextOpening } from '../core/send-window.js';
import type { JournalItem, JournalStore } from '../journal/index.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

export const SEND_WINDOW_CODE = 'DOCEX_SEND_WINDOW_CLOSED';
/** How often a held folder's window is looked at again at most, besides its opening. */
const DEFAULT_WINDOW_RECHECK_MS = 60_000;
/** Recorded as the next try when the window never opens within a year (its days and dates allow none). */
const NEVER_MS = 366 * 86_400_000;

/** The folder's send window is closed: no job may be created now. */
export class WindowClosed extends RetryLater {
  constructor(readonly opensAt: number | undefined) {
    super(
      SEND_WINDOW_CODE,
      opensAt === undefined
        ? 'send window closed; it opens on none of the next 366 days'
        : `send window closed until ${new Date(opensAt).toISOString()}`,
    );
    this.name = 'WindowClosed';
  }
}

/** Whether the folder may create a job at `now` (a folder without a window always may). */
export function windowOpen(runtime: FolderRuntime, now: number): boolean {
  const window = runtime.config.window;
  return window === undefined || isOpen(window, now);
}

/** Throws WindowClosed when the folder's send window is closed now: called right before a create. */
export function checkSendWindow(ctx: Pick<StepContext, 'clock'>, runtime: FolderRuntime): void {
  const window = runtime.config.window;
  if (!window) return;
  const now = ctx.clock.now();
  if (isOpen(window, now)) return;
  throw new WindowClosed(nextOpening(window, now));
}

export interface SendWindowHoldsOptions {
  journal: JournalStore;
  clock: Clock;
  log: Logger;
  /** Read live: a reload changes a folder's window or removes the folder. */
  folders: ReadonlyMap<string, FolderRuntime>;
  recheckMs?: number;
  /** The window opened: drive the item again. */
  resume: (itemId: number) => void;
  /** Held files were released (the pipeline checks whether it became idle). */
  onReleased: () => void;
}

/** A folder's files held until its send window opens (ops: /readyz, docex_files_held_for_window). */
export interface WindowHeld {
  folder: string;
  files: number;
  opensAt?: number;
}

export class SendWindowHolds {
  private readonly held = new Map<string, { ids: Set<number>; timer: NodeJS.Timeout | undefined }>();

  constructor(private readonly options: SendWindowHoldsOptions) {}

  /** Files held until their folder's window opens. */
  get waiting(): number {
    let n = 0;
    for (const entry of this.held.values()) n += entry.ids.size;
    return n;
  }

  /**
   * Each folder with a send window (or holding files still): how many files it holds for its
   * closed window (0: none), and when the window opens next (undefined: open now, or not within a
   * year).
   */
  heldByFolder(): WindowHeld[] {
    const now = this.options.clock.now();
    const folders = new Set(this.held.keys());
    for (const [name, runtime] of this.options.folders) if (runtime.config.window) folders.add(name);
    return [...folders].map((folder) => {
      const files = this.held.get(folder)?.ids.size ?? 0;
      const window = this.options.folders.get(folder)?.config.window;
      const opensAt = files > 0 && window ? nextOpening(window, now) : undefined;
      return { folder, files, ...(opensAt === undefined ? {} : { opensAt }) };
    });
  }

  /**
   * Whether a single file found in the journal waits for its window still (it is held again,
   * unrecorded). Only one whose next step is its create: a job created before a crash is uploaded
   * whatever the hour, within its upload window. A payload file is driven: its rows that have a
   * job finish, the next create meets the window.
   */
  holdsAgain(runtime: FolderRuntime, item: JournalItem): boolean {
    if (item.lastFailureCode !== SEND_WINDOW_CODE || item.kind !== 'file' || item.mode !== 'single-file')
      return false;
    if (item.state !== 'validated' && item.state !== 'creating') return false;
    const now = this.options.clock.now();
    if (windowOpen(runtime, now)) return false;
    const window = runtime.config.window;
    this.track(item, window ? nextOpening(window, now) : undefined);
    return true;
  }

  /** The file met a closed window before a create: recorded, held, driven again at the opening. */
  async hold(item: JournalItem, opensAt: number | undefined): Promise<void> {
    const { journal, clock, log } = this.options;
    const nextTryAt = opensAt ?? clock.now() + NEVER_MS;
    if (!(item.lastFailureCode === SEND_WINDOW_CODE && item.nextTryAt === nextTryAt)) {
      // Not worth failing the hold for: the file is held in memory all the same, and held again
      // after a restart by the same check before its create. No failure: the count stays.
      await journal
        .recordFailedTry(item.id, { code: SEND_WINDOW_CODE, nextTryAt, counted: false })
        .catch((err: unknown) => {
          log.warn(
            { folder: item.folder, file: item.fileName, err },
            'send window hold not recorded in the journal',
          );
        });
    }
    this.track(item, opensAt);
  }

  private track(item: JournalItem, opensAt: number | undefined): void {
    this.options.log.info(
      {
        folder: item.folder,
        file: item.fileName,
        itemId: item.id,
        code: SEND_WINDOW_CODE,
        opensAt: opensAt === undefined ? undefined : new Date(opensAt).toISOString(),
      },
      'file waits: send window closed',
    );
    let entry = this.held.get(item.folder);
    if (!entry) {
      entry = { ids: new Set(), timer: undefined };
      this.held.set(item.folder, entry);
    }
    entry.ids.add(item.id);
    this.arm(item.folder);
  }

  private arm(folder: string): void {
    const entry = this.held.get(folder);
    if (!entry || entry.timer) return;
    const runtime = this.options.folders.get(folder);
    const now = this.options.clock.now();
    const opening = runtime?.config.window ? nextOpening(runtime.config.window, now) : now;
    const recheck = this.options.recheckMs ?? DEFAULT_WINDOW_RECHECK_MS;
    const delay = Math.max(0, Math.min(recheck, (opening ?? Number.POSITIVE_INFINITY) - now));
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.look(folder);
    }, delay);
    entry.timer.unref();
  }

  /** At a timer: release the folder's files if its window is open (or gone), else wait again. */
  private look(folder: string): void {
    const entry = this.held.get(folder);
    if (!entry) return;
    const runtime = this.options.folders.get(folder);
    if (!runtime) {
      // The folder was removed by a reload: its files stay in the journal for its next start.
      this.held.delete(folder);
      this.options.onReleased();
      return;
    }
    if (!windowOpen(runtime, this.options.clock.now())) {
      this.options.log.debug({ folder, files: entry.ids.size }, 'send window still closed');
      this.arm(folder);
      return;
    }
    this.held.delete(folder);
    this.options.log.info({ folder, files: entry.ids.size }, 'send window open: held files released');
    for (const id of entry.ids) this.options.resume(id);
    this.options.onReleased();
  }

  /** Drops one folder's holds (a folder removed by a reload). */
  cancel(folder: string): void {
    clearTimeout(this.held.get(folder)?.timer);
    this.held.delete(folder);
  }

  /** Drops every hold (the agent stops): the files are held again at the next start. */
  cancelAll(): void {
    for (const entry of this.held.values()) clearTimeout(entry.timer);
    this.held.clear();
  }
}
