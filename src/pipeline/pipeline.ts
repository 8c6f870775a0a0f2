/**
 * The scheduler around the per-file steps: a global p-queue bounds uploads in flight across
 * folders, a queue per folder bounds each folder, and work is ordered by its upload deadline.
 * A file that must wait (the service is unwell) keeps its journal state and is tried again on a
 * timer. On start, `recover()` resumes every unfinished item and takes back files left in
 * `.processing/`, so a crash at any moment loses nothing and submits nothing twice.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import { sharedAbortController } from '../core/abort.js';
import { type DocexError, isDocexError } from '../core/errors.js';
import { FOLDER_UNSAFE_CODE } from '../core/real-dir.js';
import { defaultRetryDelay, nextTry, stepFailure } from '../domain/retry-policy.js';
import { isFinal, type JournalItem } from '../journal/index.js';
import { recoverProcessing } from '../sources/local/index.js';
import { intakeOf } from '../sources/sftp/source-paths.js';
import { placeRejected, rejectItem } from './finish.js';
import { FreshIntents } from './fresh-intents.js';
import { type IntakeFile, inspectSuspect, intakeItem, POISON_CRASHES } from './intake.js';
import { type Inspector, sharedInspector } from './isolate/inspector.js';
import { parkItem } from './park.js';
import { drivePayloadPdf, SIDECAR_WAIT_MS } from './payload-pdf.js';
import { drivePayloadWord } from './payload-word.js';
import { rejectEntry } from './reject-entry.js';
import { isSidecarName, usesSidecars } from './sidecar.js';
import { driveSingleFile } from './single-file.js';
import type { FolderRuntime, StepContext } from './types.js';

export interface PipelineOptions extends Omit<StepContext, 'signal' | 'intents' | 'held' | 'inspector'> {
  /** The isolated inspector; one with the default limits when absent. */
  inspector?: Inspector;
  /** Read live: a reload adds and removes folders in this map (see Agent.addFolder/removeFolder). */
  folders: ReadonlyMap<string, FolderRuntime>;
  /** Files in flight across all folders (config.concurrency). */
  concurrency: number;
  /** Called when a folder's backlog crosses its high (true) or low (false) mark: pause/resume intake. */
  onBacklog?: (folder: string, full: boolean) => void;
  /** Wait before try number `n` (1-based) of a file that must wait. Default 1 s doubling, at most 60 s. */
  retryDelayMs?: (n: number) => number;
  /** Told when a file item became done or rejected (SFTP sources then move the remote file). */
  onFinished?: (item: JournalItem) => void;
  /**
   * A folder the agent writes into proved not a real directory while running (DOCEX_FOLDER_UNSAFE):
   * the folder's work halts here (it stays in the journal and `.processing/`, taken up again when
   * the folder starts again) and the caller stops the folder. Without it, such a file waits and retries.
   */
  onFolderUnsafe?: (folder: string, err: DocexError) => void;
}

export interface RecoverySummary {
  resumed: number;
  reclaimed: number;
  placed: number;
  skipped: number;
  /** Files set aside as poison: their inspection was interrupted by crashes POISON_CRASHES times. */
  quarantined: number;
}

/** Sooner deadline, higher priority (p-queue runs the greatest first). */
function priorityOf(item: JournalItem | undefined, now: number): number {
  const deadline = item?.uploadDeadline ?? now + 2 * 3_600_000;
  return -Math.floor(deadline / 1000);
}

export class Pipeline {
  private readonly global: PQueue;
  private readonly queues = new Map<string, PQueue>();
  /** Per folder, the scheduled tasks not yet settled (a removed folder waits for them). */
  private readonly pending = new Map<string, Set<Promise<void>>>();
  private readonly backlog = new Map<string, number>();
  private readonly full = new Set<string>();
  private readonly keys = new Set<string>();
  private readonly tries = new Map<number, number>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  // One signal shared by every call in flight (concurrency of them, up to 256).
  private readonly abort = sharedAbortController();
  private readonly held = new Map<number, Buffer>();
  private readonly orphanTimers = new Map<string, NodeJS.Timeout>();
  private readonly ctx: StepContext;
  private readonly idleWaiters: Array<() => void> = [];
  /** Folders found unsafe: their queued work and retries run nothing until recover(folder). */
  private readonly halted = new Set<string>();
  private stopping = false;

  constructor(private readonly options: PipelineOptions) {
    this.global = new PQueue({ concurrency: options.concurrency });
    this.ctx = {
      ...options,
      inspector: options.inspector ?? sharedInspector(),
      signal: this.abort.signal,
      held: this.held,
      intents: new FreshIntents(),
    };
  }

  /**
   * A file the source just moved into `.processing/`. False: not taken (unknown folder, stopping);
   * `onLost`: taken, but its claim failed before it became an item (SFTP sources forget it then).
   */
  accept(folder: string, file: IntakeFile, onLost?: (err: unknown) => void): boolean {
    const rt = this.options.folders.get(folder);
    if (!rt) {
      this.options.log.error({ folder, file: file.name }, 'file of an unknown folder left in .processing');
      return false;
    }
    if (isSidecarName(rt, file.name)) {
      // Not an item of its own: its PDF's item reads it from .processing and moves it along.
      this.options.log.debug({ folder, file: file.name }, 'sidecar waits for its PDF');
      if (usesSidecars(rt)) this.watchOrphan(rt, file, this.options.clock.now(), 1);
      return true;
    }
    return this.schedule(
      rt,
      `path:${file.claimedPath}`,
      priorityOf(undefined, this.options.clock.now()),
      async () => {
        const item = await intakeItem(this.ctx, rt, file).catch((err: unknown) => {
          onLost?.(err);
          throw err;
        });
        try {
          await this.drive(rt, item, false);
        } finally {
          this.held.delete(item.id);
        }
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

  /**
   * Files left in `.processing/` and unfinished journal items, resumed (call before sources start).
   * `only`: one folder's (a folder added by a reload).
   */
  async recover(only?: string): Promise<RecoverySummary> {
    const summary: RecoverySummary = { resumed: 0, reclaimed: 0, placed: 0, skipped: 0, quarantined: 0 };
    const { journal, log } = this.options;
    if (only !== undefined) this.halted.delete(only);
    for (const rt of this.options.folders.values()) {
      if (only !== undefined && rt.config.name !== only) continue;
      const stability = rt.config.stability;
      const markers = stability.kind === 'done-marker' ? stability.suffixes : [];
      // SFTP folders: the local spool holds the downloaded copies (recorded under the remote URL).
      const intake = intakeOf(rt.config);
      for (const file of await recoverProcessing(intake.dir, { markerSuffixes: markers })) {
        // Before anything else reads it: a file that crashed the agent twice must not a third time.
        if (await this.quarantinePoison(rt, file)) {
          summary.quarantined++;
          continue;
        }
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
            originalPath: intake.originalPath(file.name),
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
      if (only !== undefined && step.item.folder !== only) continue;
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

  /**
   * Sets a file aside as poison when crashes interrupted its inspection POISON_CRASHES times, the
   * last one while it was inspected alone (inspectSuspect).
   */
  private async quarantinePoison(rt: FolderRuntime, file: { name: string; path: string }): Promise<boolean> {
    const { journal, log, clock } = this.options;
    const crashes = journal.interruptedInspections(file.path);
    if (crashes === 0) return false;
    if (crashes < POISON_CRASHES) {
      const ok = await inspectSuspect(this.ctx, rt, file.name, file.path);
      log.warn(
        { folder: rt.config.name, file: file.name, crashes, inspected: ok ? 'ok' : 'refused' },
        'file inspected alone: a crash interrupted its inspection',
      );
      return false;
    }
    const code = 'DOCEX_INPUT_POISON';
    const reason = `the agent crashed ${crashes} times while inspecting this file; it was set aside so it cannot crash the agent again`;
    const item = journal.byPath(file.path).find((i) => !isFinal(i.state));
    if (item) {
      await rejectItem(this.ctx, rt, item, code, reason);
    } else {
      await rejectEntry(
        {
          name: file.name,
          path: file.path,
          code,
          reason,
          fix: 'Do not drop this file again as it is: send it to the agent’s maintainers, with the log lines of the crashes.',
        },
        {
          folder: rt.config.name,
          workflowId: rt.config.workflowId,
          errorDir: rt.config.errorDir,
          now: clock.now(),
        },
      );
    }
    journal.inspectionEnded(file.path);
    log.error({ folder: rt.config.name, file: file.name, code, crashes }, 'poison file set aside');
    return true;
  }

  /** Files queued or running, all folders. */
  get size(): number {
    let n = 0;
    for (const v of this.backlog.values()) n += v;
    return n;
  }

  /**
   * A folder removed by a reload: its waiting files' retry timers are cancelled (they stay in the
   * journal and `.processing/`; a folder started again on that name recovers them, so no old timer
   * drives them beside it), then this resolves once nothing of the folder is queued or running, and
   * the folder's bookkeeping is dropped (it would otherwise grow with every reload).
   */
  async folderIdle(folder: string): Promise<void> {
    for (;;) {
      // Again after each wait: a file failing while the folder drains sets a new timer.
      this.cancelRetries(folder);
      const pending = [...(this.pending.get(folder) ?? [])];
      if (pending.length === 0) break;
      await Promise.allSettled(pending);
    }
    this.queues.delete(folder);
    this.pending.delete(folder);
    this.backlog.delete(folder);
    this.full.delete(folder);
    this.notifyIdle();
  }

  /** Folders the scheduler holds state for, and files waiting for a retry (tests, diagnostics). */
  tracked(): { folders: string[]; waiting: number } {
    const folders = new Set([...this.queues.keys(), ...this.backlog.keys(), ...this.pending.keys()]);
    return { folders: [...folders].sort(), waiting: this.timers.size + this.orphanTimers.size };
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
    for (const t of this.orphanTimers.values()) clearTimeout(t);
    this.orphanTimers.clear();
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

  /** False when stopping; a key already queued counts as taken. */
  private schedule(rt: FolderRuntime, key: string, priority: number, task: () => Promise<void>): boolean {
    if (this.stopping) return false;
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    const folder = rt.config.name;
    this.addBacklog(folder, 1);
    const run = async () => {
      if (this.halted.has(folder)) return;
      const p = task().catch((err) => {
        if (!this.haltUnsafe(folder, err)) this.options.log.error({ folder, err }, 'file step failed');
      });
      this.running.add(p);
      await p;
      this.running.delete(p);
    };
    const done: Promise<void> = this.queueOf(rt)
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

  private cancelRetries(folder: string): void {
    for (const [id, timer] of this.timers) {
      if (this.options.journal.get(id)?.folder !== folder) continue;
      clearTimeout(timer);
      this.timers.delete(id);
      this.tries.delete(id);
    }
    const prefix = `orphan:${folder}:`;
    for (const [key, timer] of this.orphanTimers) {
      if (!key.startsWith(prefix)) continue;
      clearTimeout(timer);
      this.orphanTimers.delete(key);
    }
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
      if (isFinal(final.state)) {
        this.ctx.intents.forget(item.id);
        this.options.onFinished?.(final);
      }
    } catch (err) {
      if (this.stopping) return;
      if (this.haltUnsafe(item.folder, err)) {
        this.tries.delete(item.id);
        this.options.log.warn(
          { folder: item.folder, file: item.fileName, state: item.state, code: FOLDER_UNSAFE_CODE },
          'file left where it is: its folder stopped',
        );
        return;
      }
      const n = (this.tries.get(item.id) ?? 0) + 1;
      this.tries.set(item.id, n);
      const failure = stepFailure(err);
      const next = nextTry(failure, n, this.options.retryDelayMs);
      if (next.kind === 'park' && (await this.park(rt, item, next.reason))) return;
      const delay = next.kind === 'wait' ? next.delayMs : defaultRetryDelay(n);
      this.options.log.warn(
        {
          folder: item.folder,
          file: item.fileName,
          jobId: item.jobId,
          code: failure.code,
          failure: failure.kind,
          // A bug's stack is what a report of it needs; an expected failure's message says it all.
          ...(failure.kind === 'internal' ? { err } : { reason: failure.message }),
          retryInMs: delay,
          try: n,
        },
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

  /** True when `err` says a folder the agent writes into is unsafe and the folder was halted for it. */
  private haltUnsafe(folder: string, err: unknown): boolean {
    const onUnsafe = this.options.onFolderUnsafe;
    if (!onUnsafe || this.stopping || !isDocexError(err, FOLDER_UNSAFE_CODE)) return false;
    if (!this.halted.has(folder)) {
      this.halted.add(folder);
      onUnsafe(folder, err);
    }
    return true;
  }

  /** The retry policy gave up on the file: to the error folder with what became of each document. */
  private async park(rt: FolderRuntime, item: JournalItem, reason: string): Promise<boolean> {
    const fresh = this.options.journal.get(item.id);
    if (!fresh) return false;
    try {
      const parked = await parkItem(this.ctx, rt, fresh, reason);
      if (!parked) return false;
      this.tries.delete(item.id);
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

  /**
   * A sidecar whose PDF never comes would sit in `.processing/` for ever: once it has waited as
   * long as a PDF waits for its sidecar, with no PDF beside it, it goes to the error folder. While
   * its PDF is there, that PDF's item decides (and moves the sidecar along).
   */
  private watchOrphan(rt: FolderRuntime, file: IntakeFile, since: number, n: number): void {
    const key = `orphan:${rt.config.name}:${file.claimedPath}`;
    if (this.stopping || this.orphanTimers.has(key)) return;
    const delay = (this.options.retryDelayMs ?? defaultRetryDelay)(n);
    const timer = setTimeout(() => {
      this.orphanTimers.delete(key);
      void this.checkOrphan(rt, file, since, n).catch((err: unknown) =>
        this.options.log.error(
          { folder: rt.config.name, file: file.name, err },
          'orphan sidecar check failed',
        ),
      );
    }, delay);
    timer.unref();
    this.orphanTimers.set(key, timer);
  }

  private async checkOrphan(rt: FolderRuntime, file: IntakeFile, since: number, n: number): Promise<void> {
    const exists = (p: string) =>
      fs.lstat(p).then(
        () => true,
        () => false,
      );
    if (this.stopping || !(await exists(file.claimedPath))) return;
    const stem = file.claimedPath.slice(0, -path.extname(file.claimedPath).length);
    const waited = this.options.clock.now() - since;
    if ((await exists(`${stem}.pdf`)) || (await exists(`${stem}.PDF`)) || waited < SIDECAR_WAIT_MS) {
      this.watchOrphan(rt, file, since, n + 1);
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
        folder: rt.config.name,
        workflowId: rt.config.workflowId,
        errorDir: rt.config.errorDir,
        now: this.options.clock.now(),
      },
    );
    this.options.log.warn(
      { folder: rt.config.name, file: file.name, placed },
      'sidecar without its PDF refused',
    );
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
