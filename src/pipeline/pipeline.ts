/**
 * The scheduler around the per-file steps: a global p-queue bounds uploads in flight across
 * folders, a queue per folder bounds each folder, and work is ordered by its upload deadline.
 * A file that must wait (the service is unwell) keeps its journal state and is tried again on a
 * timer. On start, `recover()` resumes every unfinished item and takes back files left in
 * `.processing/`, so a crash at any moment loses nothing and submits nothing twice.
 */
import path from 'node:path';
import PQueue from 'p-queue';
import type { JournalItem } from '../journal/index.js';
import { recoverProcessing } from '../sources/local/index.js';
import { placeRejected } from './finish.js';
import { claimItem, type IntakeFile } from './intake.js';
import { drivePayloadPdf } from './payload-pdf.js';
import { drivePayloadWord } from './payload-word.js';
import { isSidecarName } from './sidecar.js';
import { driveSingleFile } from './single-file.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

export interface PipelineOptions extends Omit<StepContext, 'signal'> {
  folders: ReadonlyMap<string, FolderRuntime>;
  /** Files in flight across all folders (config.concurrency). */
  concurrency: number;
  /** Called when a folder's backlog crosses its high (true) or low (false) mark: pause/resume intake. */
  onBacklog?: (folder: string, full: boolean) => void;
  /** Wait before try number `n` (1-based) of a file that must wait. Default 1 s doubling, at most 60 s. */
  retryDelayMs?: (n: number) => number;
}

export interface RecoverySummary {
  resumed: number;
  reclaimed: number;
  placed: number;
  skipped: number;
}

function defaultRetryDelay(n: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.min(n - 1, 6));
}

/** Sooner deadline, higher priority (p-queue runs the greatest first). */
function priorityOf(item: JournalItem | undefined, now: number): number {
  const deadline = item?.uploadDeadline ?? now + 2 * 3_600_000;
  return -Math.floor(deadline / 1000);
}

export class Pipeline {
  private readonly global: PQueue;
  private readonly queues = new Map<string, PQueue>();
  private readonly backlog = new Map<string, number>();
  private readonly full = new Set<string>();
  private readonly keys = new Set<string>();
  private readonly tries = new Map<number, number>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly ctx: StepContext;
  private readonly idleWaiters: Array<() => void> = [];
  private stopping = false;

  constructor(private readonly options: PipelineOptions) {
    this.global = new PQueue({ concurrency: options.concurrency });
    this.ctx = { ...options, signal: this.abort.signal };
  }

  /** A file the source just moved into `.processing/`. */
  accept(folder: string, file: IntakeFile): void {
    const rt = this.options.folders.get(folder);
    if (!rt) {
      this.options.log.error({ folder, file: file.name }, 'file of an unknown folder left in .processing');
      return;
    }
    if (isSidecarName(rt, file.name)) {
      // Not an item of its own: its PDF's item reads it from .processing and moves it along.
      this.options.log.debug({ folder, file: file.name }, 'sidecar waits for its PDF');
      return;
    }
    this.schedule(
      rt,
      `path:${file.claimedPath}`,
      priorityOf(undefined, this.options.clock.now()),
      async () => {
        const item = await claimItem(this.ctx, rt, file);
        await this.drive(rt, item, false);
      },
    );
  }

  /** Resumes a journal item (recovery, or a retry after a wait). */
  resume(itemId: number, rehash = false): void {
    const item = this.options.journal.get(itemId);
    if (!item) return;
    const rt = this.options.folders.get(item.folder);
    if (!rt) {
      this.options.log.warn(
        { folder: item.folder, file: item.fileName, itemId },
        'folder not running; item left',
      );
      return;
    }
    this.schedule(rt, `item:${itemId}`, priorityOf(item, this.options.clock.now()), async () => {
      const fresh = this.options.journal.get(itemId);
      if (fresh) await this.drive(rt, fresh, rehash);
    });
  }

  /** Files left in `.processing/` and unfinished journal items, resumed (call before sources start). */
  async recover(): Promise<RecoverySummary> {
    const summary: RecoverySummary = { resumed: 0, reclaimed: 0, placed: 0, skipped: 0 };
    const { journal, log } = this.options;
    for (const rt of this.options.folders.values()) {
      const stability = rt.config.stability;
      const markers = stability.kind === 'done-marker' ? stability.suffixes : [];
      for (const file of await recoverProcessing(rt.config.source.path, { markerSuffixes: markers })) {
        const newest = journal.byPath(file.path)[0];
        const sameFile =
          newest &&
          newest.size === file.size &&
          Math.trunc(newest.mtimeMs ?? -1) === Math.trunc(file.mtimeMs);
        if (newest && sameFile && newest.state === 'rejected') {
          await placeRejected(this.ctx, rt, newest);
          summary.placed++;
        } else if (!newest || !sameFile || newest.state === 'done') {
          // Moved in, then the agent stopped before the claim was recorded: take it again.
          this.accept(rt.config.name, {
            name: file.name,
            originalPath: path.join(rt.config.source.path, file.name),
            claimedPath: file.path,
          });
          summary.reclaimed++;
        }
      }
    }
    // Soonest upload deadline first: p-queue priorities only order work that waits, so order the adds too.
    const plan = journal
      .recoveryPlan({ marginMs: this.options.uploadMarginMs })
      .sort((a, b) => (a.item.uploadDeadline ?? Infinity) - (b.item.uploadDeadline ?? Infinity));
    for (const step of plan) {
      if (step.item.kind !== 'file' || step.action.kind === 'none') continue;
      if (!this.options.folders.has(step.item.folder)) {
        summary.skipped++;
        continue;
      }
      log.info(
        {
          folder: step.item.folder,
          file: step.item.fileName,
          jobId: step.item.jobId,
          action: step.action.kind,
        },
        'resuming file',
      );
      this.resume(step.item.id, step.action.kind === 'validate');
      summary.resumed++;
    }
    return summary;
  }

  /** Files queued or running, all folders. */
  get size(): number {
    let n = 0;
    for (const v of this.backlog.values()) n += v;
    return n;
  }

  /** Resolves once nothing is queued, running or waiting for a retry (tests, one-shot submit). */
  idle(): Promise<void> {
    if (this.size === 0 && this.timers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stop: nothing new starts, retries are cancelled, queued work is dropped (it stays in the
   * journal and `.processing/`), running work gets `graceMs`, then its requests are aborted.
   */
  async stop(graceMs: number): Promise<{ finished: boolean }> {
    this.stopping = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
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
      this.abort.abort();
      await Promise.allSettled([...this.running]);
    }
    return { finished };
  }

  private queueOf(rt: FolderRuntime): PQueue {
    let q = this.queues.get(rt.config.name);
    if (!q) {
      q = new PQueue({ concurrency: rt.config.concurrency });
      this.queues.set(rt.config.name, q);
    }
    return q;
  }

  private schedule(rt: FolderRuntime, key: string, priority: number, task: () => Promise<void>): void {
    if (this.stopping || this.keys.has(key)) return;
    this.keys.add(key);
    const folder = rt.config.name;
    this.addBacklog(folder, 1);
    const run = async () => {
      const p = task().catch((err) => this.options.log.error({ folder, err }, 'file step failed'));
      this.running.add(p);
      await p;
      this.running.delete(p);
    };
    void this.queueOf(rt)
      .add(() => this.global.add(run, { priority }), { priority })
      .finally(() => {
        this.keys.delete(key);
        this.addBacklog(folder, -1);
      });
  }

  private async drive(rt: FolderRuntime, item: JournalItem, rehash: boolean): Promise<void> {
    try {
      let final: JournalItem;
      if (item.mode === 'payload-word') final = await drivePayloadWord(this.ctx, rt, item, { rehash });
      else if (item.mode === 'single-file') final = await driveSingleFile(this.ctx, rt, item, { rehash });
      else final = await drivePayloadPdf(this.ctx, rt, item, { rehash });
      this.tries.delete(item.id);
      this.options.log.debug(
        { folder: item.folder, file: item.fileName, state: final.state },
        'file finished',
      );
    } catch (err) {
      if (this.stopping) return;
      const n = (this.tries.get(item.id) ?? 0) + 1;
      this.tries.set(item.id, n);
      const delay = (this.options.retryDelayMs ?? defaultRetryDelay)(n);
      const code = err instanceof RetryLater ? err.code : 'DOCEX_INTERNAL';
      this.options.log.warn(
        { folder: item.folder, file: item.fileName, jobId: item.jobId, code, err, retryInMs: delay, try: n },
        'file must wait',
      );
      const timer = setTimeout(() => {
        this.timers.delete(item.id);
        this.resume(item.id);
        this.notifyIdle();
      }, delay);
      timer.unref();
      this.timers.set(item.id, timer);
    }
  }

  private addBacklog(folder: string, delta: number): void {
    const n = (this.backlog.get(folder) ?? 0) + delta;
    this.backlog.set(folder, n);
    const rt = this.options.folders.get(folder);
    const high = Math.max(16, (rt?.config.concurrency ?? 1) * 8);
    if (!this.full.has(folder) && n >= high) {
      this.full.add(folder);
      this.options.onBacklog?.(folder, true);
    } else if (this.full.has(folder) && n <= high / 2) {
      this.full.delete(folder);
      this.options.onBacklog?.(folder, false);
    }
    if (delta < 0) this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.size !== 0 || this.timers.size !== 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
