/**
 * The agent's side of the isolated inspection: every parse of a dropped file runs as a task of a
 * worker pool under the configured memory cap and time limit. A task that hits a limit (or kills
 * its worker) answers DOCEX_INPUT_TOO_COMPLEX naming the limit, so the file is rejected like any
 * bad input and the agent carries on; the event loop never runs a parser on dropped bytes.
 */
import type { Worker } from 'node:worker_threads';
import { type InspectionConfig, inspectionSchema } from '../../config/inspection-schema.js';
import type { Logger } from '../../core/logger.js';
import { type LimitHit, spawnModuleWorker, WorkerPool } from '../../core/worker-pool.js';
import { type InputRejection, mib, quoteName, reject } from '../inspect/codes.js';
import type { TaskName, Tasks } from './tasks.js';

/**
 * A worker idle this long is ended: its isolate, with the parsers loaded, is memory an agent at
 * rest does not need. Starting one again (a new isolate loading pdf-lib) is paid at most once per
 * such pause. Figures: docs/benchmarks.md#bounded-memory-issue-18.
 */
export const WORKER_IDLE_MS = 30_000;
/**
 * A second worker starts only once a file has waited this long for the first: a small PDF's check
 * is short, so one worker keeps up with a burst at a lower memory peak than two, and no slower
 * (docs/benchmarks.md#bounded-memory-issue-18), while a long check (a large PDF) holds up the
 * files behind it for a second at most.
 */
export const WORKER_GROW_AFTER_MS = 1000;

type Answer<K extends TaskName> = Awaited<ReturnType<Tasks[K]>>;

/** The worker script (worker.ts), without the agent's flags (tsx's loader, V8 GC tuning). */
function spawnWorker(limits: InspectionConfig): Worker {
  const memoryMb = Math.max(16, Math.floor(limits.memory / 1024 ** 2));
  return spawnModuleWorker(import.meta.url, 'worker', {
    workerData: { limits: limits.limits },
    resourceLimits: {
      maxOldGenerationSizeMb: memoryMb,
      maxYoungGenerationSizeMb: Math.min(16, memoryMb / 4),
    },
  });
}

function limitReason(fileName: string, hit: LimitHit, limits: InspectionConfig): string {
  const name = quoteName(fileName);
  if (hit.limit === 'time')
    return `${name} could not be checked in ${limits.timeLimit / 1000} s (inspection.timeLimit); it is too complex to inspect safely.`;
  if (hit.limit === 'memory')
    return `${name} needed more than ${mib(limits.memory)} of memory to check (inspection.memory); it is too complex to inspect safely.`;
  return `${name} stopped the inspector (${hit.message}); it is refused rather than retried.`;
}

export class Inspector {
  private readonly pool: WorkerPool;
  readonly limits: InspectionConfig;
  /** The limits a check's answer depends on (memory, time, expansion), as one string: a cache key part. */
  readonly limitsKey: string;

  constructor(
    limits: Partial<Omit<InspectionConfig, 'limits'>> & { limits?: Partial<InspectionConfig['limits']> } = {},
    log?: Logger,
  ) {
    const defaults = inspectionSchema.parse({});
    this.limits = { ...defaults, ...limits, limits: { ...defaults.limits, ...limits.limits } };
    const { memory, timeLimit } = this.limits;
    this.limitsKey = JSON.stringify({ memory, timeLimit, limits: this.limits.limits });
    this.pool = new WorkerPool(
      () => spawnWorker(this.limits),
      {
        threads: this.limits.workers,
        timeLimitMs: this.limits.timeLimit,
        idleMs: WORKER_IDLE_MS,
        growAfterMs: WORKER_GROW_AFTER_MS,
      },
      (text) => log?.debug({ parser: text.slice(0, 500) }, 'parser message'),
    );
  }

  /**
   * Runs a task on `fileName`'s bytes in a worker. A limit hit answers DOCEX_INPUT_TOO_COMPLEX;
   * a task's own error (the file vanished) is thrown as a TaskError with its code.
   */
  run<K extends TaskName>(
    task: K,
    fileName: string,
    ...args: Parameters<Tasks[K]>
  ): Promise<Answer<K> | InputRejection> {
    return this.runTracked(task, fileName, undefined, ...args);
  }

  /** As run; `started` is told when a worker takes the task (its parse begins). */
  async runTracked<K extends TaskName>(
    task: K,
    fileName: string,
    started: (() => void | Promise<void>) | undefined,
    ...args: Parameters<Tasks[K]>
  ): Promise<Answer<K> | InputRejection> {
    const answer = await this.pool.run<Answer<K>>(task, args, started);
    if (answer.ok) return answer.value;
    return reject('DOCEX_INPUT_TOO_COMPLEX', limitReason(fileName, answer.hit, this.limits), {
      limit: answer.hit.limit,
      ...(answer.hit.limit === 'time' ? { timeLimitMs: this.limits.timeLimit } : {}),
      ...(answer.hit.limit === 'memory' ? { memoryBytes: this.limits.memory } : {}),
    });
  }

  /** Starts a worker ahead of the first file (files are settling): its start is then not in a file's way. */
  warm(): void {
    this.pool.warm();
  }

  /** Worker threads alive. */
  get workers(): number {
    return this.pool.size;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

let shared: Inspector | undefined;

/** One inspector with the default limits, for callers not given one (tests, one-shot commands). */
export function sharedInspector(): Inspector {
  shared ??= new Inspector();
  return shared;
}
