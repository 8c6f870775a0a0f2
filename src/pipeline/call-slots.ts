/**
 * What `concurrency` bounds: the intake's calls to the service in flight (a create once its intent
 * is on disk, a lookup by name, an upload, a job's status), all folders together and per folder
 * (its `concurrency`). The scheduler admits more files than that (scheduler.ts, LOOKAHEAD), so a
 * file's local steps (claim, hash, inspection, journal moves and their fsyncs, archive) run beside
 * other files' calls rather than holding a call's place. A call waiting for its place goes in the
 * scheduler's order (priorityOf): the greatest first, then the one that came first.
 */
import type { JournalItem } from '../journal/index.js';
import { priorityOf } from './scheduler.js';
import type { FolderRuntime, StepContext } from './types.js';

interface Waiter {
  folder: string;
  priority: number;
  seq: number;
  start: () => void;
}

export class CallSlots {
  private inFlight = 0;
  private readonly byFolder = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  private seq = 0;

  /** `limitOf(folder)`: the folder's own bound, read at each start (a reload may change it). */
  constructor(
    private readonly concurrency: number,
    private readonly limitOf: (folder: string) => number,
  ) {}

  /** Calls in flight now, all folders, and those of `folder`. */
  running(folder?: string): number {
    return folder === undefined ? this.inFlight : (this.byFolder.get(folder) ?? 0);
  }

  /**
   * Runs `call` once a place is free, globally and in `folder`; the place is freed when it
   * settles. Rejects with `signal`'s reason, unstarted, when it aborts while waiting.
   */
  async run<T>(folder: string, priority: number, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.take(folder, priority, signal);
    try {
      return await call();
    } finally {
      this.inFlight--;
      this.byFolder.set(folder, (this.byFolder.get(folder) ?? 1) - 1);
      this.startWaiting();
    }
  }

  private fits(folder: string): boolean {
    return this.inFlight < this.concurrency && this.running(folder) < this.limitOf(folder);
  }

  private taken(folder: string): void {
    this.inFlight++;
    this.byFolder.set(folder, this.running(folder) + 1);
  }

  private take(folder: string, priority: number, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (this.waiting.length === 0 && this.fits(folder)) {
      this.taken(folder);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        folder,
        priority,
        seq: this.seq++,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
      this.waiting.sort((a, b) => b.priority - a.priority || a.seq - b.seq);
      // A folder at its own bound must not hold back another folder's call behind it.
      this.startWaiting();
    });
  }

  /** Starts waiting calls, best first, while places are free (skipping folders at their bound). */
  private startWaiting(): void {
    for (let i = 0; i < this.waiting.length && this.inFlight < this.concurrency; ) {
      const waiter = this.waiting[i]!;
      if (!this.fits(waiter.folder)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.taken(waiter.folder);
      waiter.start();
    }
  }
}

/** Runs one of the item's service calls in its place (ctx.callSlots), or right away without one. */
export function inCallSlot<T>(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  call: () => Promise<T>,
): Promise<T> {
  if (!ctx.callSlots) return call();
  const priority = priorityOf(item, ctx.clock.now(), runtime.config.priority);
  return ctx.callSlots.run(runtime.config.name, priority, call, ctx.signal);
}
