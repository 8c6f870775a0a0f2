/**
 * A small pool of worker threads, each running one task at a time under a memory cap
 * (`resourceLimits`) and a time limit counted from the moment the task reaches a ready worker.
 * A worker that runs out of memory, overruns or dies is terminated and replaced; its task answers
 * which limit it hit, and the pool carries on with the next task. The agent's inspection of
 * dropped files (pipeline/isolate) and the sandbox's reading of uploads (sandbox/content) both
 * run on it, which is why it lives in core.
 *
 * Hand-written rather than piscina: the time limit must start when the
 * task starts, not when it is queued, and the answer must name the limit hit; both would need
 * wrapping the library's queue and abort handling anyway.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { DocexError } from './errors.js';

/**
 * Starts the worker module `<stem>.js` beside `base` (a module's import.meta.url) once built; from
 * the sources (tsx, vitest) `<stem>.ts`, imported after tsx's loader is registered in the new
 * thread (a worker does not inherit it). The worker gets no flags of the parent's (`execArgv`).
 */
export function spawnModuleWorker(base: string, stem: string, options: WorkerOptions): Worker {
  const opts = { ...options, execArgv: [] };
  const built = new URL(`./${stem}.js`, base);
  if (existsSync(fileURLToPath(built))) return new Worker(built, opts);
  const source = JSON.stringify(new URL(`./${stem}.ts`, base).href);
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${source}); })`;
  return new Worker(boot, { ...opts, eval: true });
}

export interface PoolLimits {
  /** Worker threads at most; started on demand. */
  threads: number;
  /** Time one task may run, in ms. */
  timeLimitMs: number;
  /**
   * A worker left without a task this long (ms) is ended, and started again on demand: each holds
   * an isolate with the parsers loaded, memory that an agent at rest does not need.
   * Undefined: kept while the pool lives.
   */
  idleMs?: number | undefined;
  /**
   * With a worker already running, another starts only once a task has waited this long (ms) for
   * one, counted from when the last worker became ready (a slow start under load is not a queue):
   * a worker that keeps up is not joined by one that would sit idle, while a long check (a
   * large PDF) does not hold up the files behind it for longer than this. Undefined: a worker
   * starts for every waiting task, up to `threads`.
   */
  growAfterMs?: number | undefined;
}

export type LimitHit =
  | { limit: 'memory'; message: string }
  | { limit: 'time'; message: string }
  | { limit: 'crash'; message: string };

export type PoolAnswer<T> = { ok: true; value: T } | { ok: false; hit: LimitHit };

/** What a worker posts: `ready` once loaded, then one answer per task. */
export type WorkerMessage =
  | { ready: true }
  | { log: string }
  | { value: unknown }
  | { error: { message: string; code?: string; details?: Record<string, unknown> } };

/** A task's own failure (an I/O error, a bug), rethrown on the calling side with its code. */
export class TaskError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'TaskError';
  }
}

interface Job {
  task: string;
  /** performance.now() when it was queued. */
  queuedAt: number;
  args: unknown[];
  /**
   * Told when a worker takes the job (after any wait in the queue or for a worker to start); the
   * parse begins once what it answers has settled, and not at all when that rejects.
   */
  started?: (() => void | Promise<void>) | undefined;
  resolve(answer: PoolAnswer<unknown>): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job | undefined;
  timer?: NodeJS.Timeout | undefined;
  /** Ends the worker once it has been idle for `idleMs`. */
  idleTimer?: NodeJS.Timeout | undefined;
}

export class WorkerPool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Job[] = [];
  private closed = false;
  /** Workers in a row that died before they were ready: a broken worker script, not a file. */
  private failedStarts = 0;
  /** Fires when the oldest waiting task will have waited `growAfterMs`; cleared when the queue empties. */
  private growTimer: NodeJS.Timeout | undefined;
  /** performance.now() when a worker last became ready: a wait for a starting worker does not count. */
  private lastReadyAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly spawn: () => Worker,
    private readonly limits: PoolLimits,
    /** What a worker's parsers said on its console. */
    private readonly onLog: (text: string) => void = () => {},
  ) {}

  run<T>(task: string, args: unknown[], started?: () => void | Promise<void>): Promise<PoolAnswer<T>> {
    if (this.closed) return Promise.reject(new Error('the worker pool is closed'));
    return new Promise<PoolAnswer<unknown>>((resolve, reject) => {
      this.queue.push({ task, args, queuedAt: performance.now(), resolve, reject, started });
      this.pump();
    }) as Promise<PoolAnswer<T>>;
  }

  /**
   * Starts a worker now when none is alive, so the next task does not wait for its start; it is
   * ended as any idle worker is (idleMs) if no task comes.
   */
  warm(): void {
    if (!this.closed && this.slots.size === 0) this.start();
  }

  /** Workers alive (busy, idle or starting). */
  get size(): number {
    return this.slots.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.growTimer);
    for (const job of this.queue.splice(0)) job.reject(new Error('the worker pool is closed'));
    const slots = [...this.slots];
    this.slots.clear();
    this.idle.length = 0;
    for (const slot of slots) {
      clearTimeout(slot.timer);
      clearTimeout(slot.idleTimer);
      slot.job?.reject(new Error('the worker pool is closed'));
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const slot = this.idle.pop();
      if (slot) {
        this.dispatch(slot, this.queue.shift() as Job);
        continue;
      }
      const starting = [...this.slots].filter((s) => !s.ready).length;
      // Enough workers already on their way for the queue: wait for them.
      if (this.slots.size >= this.limits.threads || starting >= this.queue.length) return;
      const growAfterMs = this.limits.growAfterMs;
      if (this.slots.size > 0 && growAfterMs !== undefined) {
        if (starting > 0) return; // pumped again once it is ready
        const waited = performance.now() - Math.max((this.queue[0] as Job).queuedAt, this.lastReadyAt);
        if (waited < growAfterMs) {
          this.growTimer ??= setTimeout(() => {
            this.growTimer = undefined;
            this.pump();
          }, growAfterMs - waited).unref();
          return;
        }
      }
      this.start();
    }
    clearTimeout(this.growTimer);
    this.growTimer = undefined;
  }

  private start(): void {
    const worker = this.spawn();
    const slot: Slot = { worker, ready: false };
    this.slots.add(slot);
    worker.on('message', (m: WorkerMessage) => this.onMessage(slot, m));
    worker.on('error', (err: Error & { code?: string }) => {
      const memory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.retire(
        slot,
        memory ? { limit: 'memory', message: err.message } : { limit: 'crash', message: err.message },
      );
    });
    worker.on('exit', (code) =>
      this.retire(slot, { limit: 'crash', message: `the worker exited (code ${code})` }),
    );
  }

  private dispatch(slot: Slot, job: Job): void {
    slot.job = job;
    clearTimeout(slot.idleTimer);
    slot.worker.ref();
    const ms = this.limits.timeLimitMs;
    slot.timer = setTimeout(
      () => this.retire(slot, { limit: 'time', message: `ran longer than ${ms} ms` }),
      ms,
    );
    const post = () => slot.worker.postMessage({ task: job.task, args: job.args });
    const before = job.started?.();
    if (!before) {
      post();
      return;
    }
    before.then(
      () => {
        if (slot.job === job) post();
      },
      (err: unknown) => {
        if (slot.job !== job) return;
        // Nothing was parsed: the worker is free again.
        clearTimeout(slot.timer);
        slot.job = undefined;
        slot.worker.unref();
        this.idle.push(slot);
        job.reject(err instanceof Error ? err : new Error(String(err)));
        this.pump();
      },
    );
  }

  private onMessage(slot: Slot, m: WorkerMessage): void {
    if (!this.slots.has(slot)) return;
    if ('log' in m) {
      this.onLog(m.log);
      return;
    }
    if ('ready' in m) {
      slot.ready = true;
      this.failedStarts = 0;
      this.lastReadyAt = performance.now();
    } else {
      const job = slot.job;
      clearTimeout(slot.timer);
      slot.job = undefined;
      if ('error' in m) job?.reject(new TaskError(m.error.message, m.error.code, m.error.details));
      else job?.resolve({ ok: true, value: m.value });
    }
    // Idle workers do not keep the process alive.
    slot.worker.unref();
    this.idle.push(slot);
    this.pump();
    if (this.limits.idleMs !== undefined && !slot.job) {
      slot.idleTimer = setTimeout(() => this.retireIdle(slot), this.limits.idleMs).unref();
    }
  }

  /** Ends a worker that has had no task for `idleMs`; the next task starts a new one. */
  private retireIdle(slot: Slot): void {
    if (slot.job || !this.slots.delete(slot)) return;
    const at = this.idle.indexOf(slot);
    if (at !== -1) this.idle.splice(at, 1);
    void slot.worker.terminate();
  }

  /** Ends a worker for good (limit hit, crash, exit): its task answers the hit, a new worker follows on demand. */
  private retire(slot: Slot, hit: LimitHit): void {
    if (!this.slots.delete(slot)) return;
    clearTimeout(slot.timer);
    clearTimeout(slot.idleTimer);
    if (!slot.ready && ++this.failedStarts >= 3) {
      const err = new DocexError('DOCEX_INTERNAL', `the pool's worker cannot start: ${hit.message}`);
      for (const job of this.queue.splice(0)) job.reject(err);
    }
    const at = this.idle.indexOf(slot);
    if (at !== -1) this.idle.splice(at, 1);
    void slot.worker.terminate();
    const job = slot.job;
    slot.job = undefined;
    job?.resolve({ ok: false, hit });
    this.pump();
  }
}
