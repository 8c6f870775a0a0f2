/**
 * Which file runs when: a global p-queue bounds the files in flight across folders, a queue per
 * folder bounds each folder (in the pipeline LOOKAHEAD times the `concurrency` that bounds their
 * service calls, call-slots.ts), and work waiting for a slot runs soonest upload deadline first, then
 * the new files of the folder with the highest `priority` (in the order they came in). The
 * backlog of each folder is counted so its intake pauses at a high mark and resumes once it drains.
 * A folder halted (found unsafe) runs nothing of its queued work until it is let go again.
 */
import PQueue from 'p-queue';
import type { JournalItem } from '../journal/index.js';
import type { FolderRuntime } from './types.js';

/** The upload window a file not created yet will get: it waits behind files whose window is running out. */
const DEFAULT_WINDOW_MS = 2 * 3_600_000;

/**
 * One folder priority step, in seconds of deadline: wider than any epoch second, so a folder's
 * priority outranks when its files came in, and that order counts only within one priority.
 */
const FOLDER_STEP = 1e10;
/**
 * Work whose upload window already runs ranks above the new work of every folder (priorities are
 * -1000..1000 in the schema: 1e13 at most), below 2^53 so every rank is an exact number.
 */
const DEADLINE_BAND = 1e14;

/**
 * p-queue runs the greatest first. Work whose upload window runs (a job created, its upload
 * deadline known) goes first, soonest deadline first, whatever its folder's priority: its window
 * must not be spent waiting. Other work (files not created yet) goes by its folder's priority,
 * higher first, then in the order it came in (the deadline it would get, now plus the window).
 */
export function priorityOf(item: JournalItem | undefined, now: number, folderPriority: number): number {
  if (item?.uploadDeadline !== undefined) return DEADLINE_BAND - Math.floor(item.uploadDeadline / 1000);
  return folderPriority * FOLDER_STEP - Math.floor((now + DEFAULT_WINDOW_MS) / 1000);
}

/**
 * Files in flight per service call in flight: while some files' calls run, as many more do their
 * local steps (claim, hash, inspection, journal moves, archive), so the calls' places stay used.
 */
export const LOOKAHEAD = 2;

/** The backlog at which a folder's intake pauses; it resumes at half of it. */
export function backlogHighMark(folderConcurrency: number): number {
  return Math.max(16, folderConcurrency * 8);
}

export interface SchedulerOptions {
  /** Files in flight across all folders: `lookahead` times this. */
  concurrency: number;
  /**
   * Files in flight per `concurrency` (globally and of a folder's): the pipeline's is LOOKAHEAD,
   * its service calls bounded by `concurrency` apart (call-slots.ts). Default 1.
   */
  lookahead?: number;
  /** Read live (a reload changes it): a folder's concurrency sets its backlog marks. */
  folders: ReadonlyMap<string, FolderRuntime>;
  /** A folder's backlog crossed its high (true) or low (false) mark: pause or resume its intake. */
  onBacklog?: (folder: string, full: boolean) => void;
  /** A task threw (the file's own failures are handled inside it: this is what escaped). */
  onTaskError: (folder: string, err: unknown) => void;
  /** A task left the backlog (the pipeline checks whether it became idle). */
  onSettled: () => void;
}

export class Scheduler {
  private readonly global: PQueue;
  private readonly queues = new Map<string, PQueue>();
  /** Per folder, the scheduled tasks not yet settled (a removed folder waits for them). */
  private readonly pending = new Map<string, Set<Promise<void>>>();
  private readonly backlog = new Map<string, number>();
  private readonly full = new Set<string>();
  /** Keys of tasks queued or running: the same file is never queued twice. */
  private readonly keys = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly halted = new Set<string>();
  private stopped = false;

  constructor(private readonly options: SchedulerOptions) {
    this.global = new PQueue({ concurrency: options.concurrency * (options.lookahead ?? 1) });
  }

  /** True once stop() began: nothing new is scheduled. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Files queued or running, all folders. */
  get size(): number {
    let n = 0;
    for (const v of this.backlog.values()) n += v;
    return n;
  }

  /** Folders the scheduler holds state for. */
  folders(): string[] {
    return [...new Set([...this.queues.keys(), ...this.backlog.keys(), ...this.pending.keys()])].sort();
  }

  /** False when stopping; a key already queued or running counts as taken. */
  schedule(runtime: FolderRuntime, key: string, priority: number, task: () => Promise<void>): boolean {
    if (this.stopped) return false;
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    const folder = runtime.config.name;
    this.addBacklog(folder, 1);
    const run = async () => {
      if (this.halted.has(folder)) return;
      const p = task().catch((err: unknown) => this.options.onTaskError(folder, err));
      this.running.add(p);
      await p;
      this.running.delete(p);
    };
    const done: Promise<void> = this.queueOf(runtime)
      .add(() => this.global.add(run, { priority }), { priority })
      .catch(() => {})
      .finally(() => {
        this.keys.delete(key);
        this.pending.get(folder)?.delete(done);
        this.addBacklog(folder, -1);
      });
    let set = this.pending.get(folder);
    if (!set) {
      set = new Set();
      this.pending.set(folder, set);
    }
    set.add(done);
    return true;
  }

  /** Queued work of the folder runs nothing until release(folder). True the first time. */
  halt(folder: string): boolean {
    if (this.halted.has(folder)) return false;
    this.halted.add(folder);
    return true;
  }

  release(folder: string): void {
    this.halted.delete(folder);
  }

  /**
   * Resolves once nothing of the folder is queued or running, then drops its state (it would
   * otherwise grow with every reload). `beforeEachWait` runs before every wait: work settling
   * while the folder drains may have set new timers that would schedule it again.
   */
  async drain(folder: string, beforeEachWait: () => void): Promise<void> {
    for (;;) {
      beforeEachWait();
      const pending = [...(this.pending.get(folder) ?? [])];
      if (pending.length === 0) break;
      await Promise.allSettled(pending);
    }
    this.queues.delete(folder);
    this.pending.delete(folder);
    this.backlog.delete(folder);
    this.full.delete(folder);
  }

  /**
   * Nothing new starts and queued work is dropped (it stays in the journal and `.processing/`);
   * running work gets `graceMs`, then `abort` is called and it is waited for.
   */
  async stop(graceMs: number, abort: () => void): Promise<{ finished: boolean }> {
    this.stopped = true;
    this.global.clear();
    for (const q of this.queues.values()) q.clear();
    const settled = Promise.allSettled([...this.running]).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    });
    const finished = await Promise.race([settled, late]);
    clearTimeout(timer);
    if (!finished) {
      abort();
      await Promise.allSettled([...this.running]);
    }
    return { finished };
  }

  private queueOf(runtime: FolderRuntime): PQueue {
    let q = this.queues.get(runtime.config.name);
    if (!q) {
      q = new PQueue({ concurrency: runtime.config.concurrency * (this.options.lookahead ?? 1) });
      this.queues.set(runtime.config.name, q);
    }
    return q;
  }

  private addBacklog(folder: string, delta: number): void {
    const n = (this.backlog.get(folder) ?? 0) + delta;
    this.backlog.set(folder, n);
    const high = backlogHighMark(this.options.folders.get(folder)?.config.concurrency ?? 1);
    if (!this.full.has(folder) && n >= high) {
      this.full.add(folder);
      this.options.onBacklog?.(folder, true);
    } else if (this.full.has(folder) && n <= high / 2) {
      this.full.delete(folder);
      this.options.onBacklog?.(folder, false);
    }
    if (delta < 0) this.options.onSettled();
  }
}
