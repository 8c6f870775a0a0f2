/**
 * The sandbox's side of reading uploads: every parse of an uploaded file runs as a task of a
 * worker pool (core/worker-pool.ts, as the agent's inspection does) under a memory cap and a time
 * limit, so a hostile or huge upload never holds the event loop that answers the other clients.
 * A file that hits a limit is refused as any unreadable upload is: the job fails with an
 * UNREADABLE_FILE entry naming the limit.
 */
import { type LimitHit, spawnModuleWorker, WorkerPool } from '../../core/worker-pool.js';
import type { SpoolTask } from './spool.js';
import { fail, type ReadResult } from './types.js';

export interface UploadReaderLimits {
  /** Uploads read at the same time, each in its own worker thread. */
  threads: number;
  /** Heap one worker may use, in bytes. */
  memoryBytes: number;
  /** How long reading one file may take, in ms. */
  timeLimitMs: number;
}

export const UPLOAD_READER_DEFAULTS: UploadReaderLimits = {
  threads: 2,
  memoryBytes: 256 * 1024 ** 2,
  timeLimitMs: 30_000,
};

/** An idle worker is ended after this long: a sandbox at rest does not keep parsers loaded. */
const IDLE_MS = 30_000;

function limitMessage(filename: string, hit: LimitHit, limits: UploadReaderLimits): string {
  if (hit.limit === 'time')
    return `${filename} could not be read in ${limits.timeLimitMs / 1000} s; it is too complex to process`;
  if (hit.limit === 'memory')
    return `${filename} needed more than ${Math.round(limits.memoryBytes / 1024 ** 2)} MiB of memory to read; it is too complex to process`;
  return `${filename} stopped the reader (${hit.message})`;
}

export class UploadReader {
  readonly limits: UploadReaderLimits;
  private readonly pool: WorkerPool;

  constructor(limits: Partial<UploadReaderLimits> = {}) {
    this.limits = { ...UPLOAD_READER_DEFAULTS, ...limits };
    const memoryMb = Math.max(16, Math.floor(this.limits.memoryBytes / 1024 ** 2));
    this.pool = new WorkerPool(
      () =>
        spawnModuleWorker(import.meta.url, 'upload-reader-worker', {
          resourceLimits: {
            maxOldGenerationSizeMb: memoryMb,
            maxYoungGenerationSizeMb: Math.min(16, memoryMb / 4),
          },
        }),
      { threads: this.limits.threads, timeLimitMs: this.limits.timeLimitMs, idleMs: IDLE_MS },
    );
  }

  /**
   * Reads the upload into its spool in a worker. Rejects only when the pool is closed (the
   * sandbox stops) or the worker cannot start; a file it cannot read answers why.
   */
  async spool(task: SpoolTask): Promise<ReadResult> {
    const answer = await this.pool.run<ReadResult>('spool', [task]);
    if (answer.ok) return answer.value;
    return fail('UNREADABLE_FILE', limitMessage(task.filename, answer.hit, this.limits));
  }

  /** Ends the workers at once: a file being read is abandoned (its run rejects). */
  close(): Promise<void> {
    return this.pool.close();
  }
}
