/**
 * A sidecar is claimed like any file but is not an item of its own: its PDF's item reads it from
 * `.processing/` and moves it along. One whose PDF never comes would sit there for ever, so each
 * claimed sidecar is watched: once it has waited as long as a PDF waits for its sidecar
 * (SIDECAR_WAIT_MS), with no PDF beside it, it goes to the error folder. While its PDF is there,
 * that PDF's item decides.
 */
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { existsOrFalse } from '../core/fs.js';
import type { Logger } from '../core/logger.js';
import { defaultRetryDelay } from '../domain/retry-policy.js';
import type { IntakeFile } from './intake.js';
import { SIDECAR_WAIT_MS } from './payload-pdf.js';
import { rejectEntry } from './reject-entry.js';
import type { FolderRuntime } from './types.js';

export interface OrphanSidecarsOptions {
  clock: Clock;
  log: Logger;
  /** Wait before look number `n` (1-based); the retry policy's default when absent. */
  retryDelayMs?: (n: number) => number;
}

/** True while the sidecar's PDF (`letter.pdf` or `letter.PDF` beside `letter.json`) is in `.processing/`. */
export async function hasPdfBeside(sidecarPath: string): Promise<boolean> {
  const stem = sidecarPath.slice(0, -path.extname(sidecarPath).length);
  return (await existsOrFalse(`${stem}.pdf`)) || (await existsOrFalse(`${stem}.PDF`));
}

export class OrphanSidecars {
  /** By claimed path: a sidecar is watched once. */
  private readonly timers = new Map<string, { folder: string; timer: NodeJS.Timeout }>();
  private stopped = false;

  constructor(private readonly options: OrphanSidecarsOptions) {}

  /** Sidecars watched now. */
  get watched(): number {
    return this.timers.size;
  }

  /** Watches a sidecar just claimed into `.processing/`. */
  watch(runtime: FolderRuntime, file: IntakeFile): void {
    this.schedule(runtime, file, this.options.clock.now(), 1);
  }

  /** Stops watching one folder's sidecars (removed by a reload; the next start of it recovers them). */
  cancel(folder: string): void {
    for (const [key, watch] of this.timers) {
      if (watch.folder !== folder) continue;
      clearTimeout(watch.timer);
      this.timers.delete(key);
    }
  }

  /** Stops watching everything, for good (the agent stops). */
  stop(): void {
    this.stopped = true;
    for (const watch of this.timers.values()) clearTimeout(watch.timer);
    this.timers.clear();
  }

  private schedule(runtime: FolderRuntime, file: IntakeFile, since: number, n: number): void {
    const key = file.claimedPath;
    if (this.stopped || this.timers.has(key)) return;
    const delay = (this.options.retryDelayMs ?? defaultRetryDelay)(n);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      void this.check(runtime, file, since, n).catch((err: unknown) =>
        this.options.log.error(
          { folder: runtime.config.name, file: file.name, err },
          'orphan sidecar check failed',
        ),
      );
    }, delay);
    timer.unref();
    this.timers.set(key, { folder: runtime.config.name, timer });
  }

  private async check(runtime: FolderRuntime, file: IntakeFile, since: number, n: number): Promise<void> {
    // Gone: its PDF's item moved it along.
    if (this.stopped || !(await existsOrFalse(file.claimedPath))) return;
    const waited = this.options.clock.now() - since;
    if ((await hasPdfBeside(file.claimedPath)) || waited < SIDECAR_WAIT_MS) {
      this.schedule(runtime, file, since, n + 1);
      return;
    }
    const placed = await rejectEntry(
      {
        name: file.name,
        path: file.claimedPath,
        code: 'DOCEX_INPUT_SIDECAR_ORPHAN',
        reason: `${JSON.stringify(file.name)} is a payload file whose PDF did not arrive within ${SIDECAR_WAIT_MS / 60_000} minutes.`,
        fix: 'Drop the PDF and its payload file again, together.',
      },
      {
        folder: runtime.config.name,
        workflowId: runtime.config.workflowId,
        errorDir: runtime.config.errorDir,
        now: this.options.clock.now(),
      },
    );
    this.options.log.warn(
      { folder: runtime.config.name, file: file.name, placed },
      'sidecar without its PDF refused',
    );
  }
}
