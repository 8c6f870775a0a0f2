import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crashPoint } from '../core/crash-points.js';
import { DocexError } from '../core/errors.js';
import { KeyedQueue } from '../core/keyed-queue.js';
import type { Logger } from '../core/logger.js';
import { assertRealPath } from '../core/real-dir.js';
import { makeSharedDir } from '../core/shared-dir.js';
import { PROCESS_WRITER, tempBaseName } from '../core/temp-name.js';
import { removeOldLocal } from './retention.js';
import type { OutputContent, OutputTarget, Removed } from './types.js';

/** The temp names of tempBaseName, with or without a writer. */
const TEMP_NAME = /^\.docex-[0-9a-f]{12}(?:-[0-9a-f]{8})?\.tmp$/;

/** Resolves `relPath` inside `root`, refusing anything that would leave it. */
export function resolveInside(root: string, relPath: string): string {
  const target = path.resolve(root, relPath);
  if (!relPath || path.isAbsolute(relPath) || !target.startsWith(path.resolve(root) + path.sep)) {
    throw new DocexError('DOCEX_OUTPUT_PATH', `output path ${JSON.stringify(relPath)} leaves its folder`);
  }
  return target;
}

export interface LocalTargetOptions {
  /** Mode of the files written (default 0640: the ERP's group reads them). */
  fileMode?: number;
  /** Told (with `at`) when a write makes the output folder itself or a folder above it. */
  log?: Logger;
  /** Config place for that line (`returns.proofs.target`). */
  at?: string;
  /** The temp names' writer (tempBaseName); default this process's. */
  writer?: string;
  /**
   * Other agents may write this folder at once (a shared journal): the sweep before the first
   * write leaves their temp files alone (see sweepStale).
   */
  shared?: boolean;
  /** Dead agents' writers: their temp file of a target goes once this write of it is in place. */
  deadWriters?: (() => Promise<readonly string[]>) | undefined;
}

/**
 * On a shared folder, another writer's temp file untouched this long is a killed process's
 * leftover: far beyond any write's duration (a write in flight keeps its file fresh), and beyond
 * any skew between the hosts' clocks and the file server's.
 */
export const SHARED_TEMP_STALE_MS = 24 * 3_600_000;

/**
 * An output folder on this machine: temp name beside the target (this writer's), fsync, rename.
 * The output folder is the agent's own (the ERP reads from it): a missing one is made at the first
 * write, with one info line listing what was made, the folders above it too (a mistyped path shows
 * there, as the sample configuration's fresh `var/out` does). The date folders inside it are made
 * without a line.
 */
export class LocalTarget implements OutputTarget {
  readonly description: string;
  /** Writes of one target one after the other: they share its temp name. */
  private readonly writing = new KeyedQueue();
  private swept: Promise<void> | undefined;
  private readonly fileMode: number;
  readonly writer: string;

  constructor(
    private readonly root: string,
    private readonly options: LocalTargetOptions = {},
  ) {
    this.description = `local:${root}`;
    this.fileMode = options.fileMode ?? 0o640;
    this.writer = options.writer ?? PROCESS_WRITER;
  }

  async write(relPath: string, content: OutputContent): Promise<void> {
    const target = resolveInside(this.root, relPath);
    this.swept ??= this.sweepStale();
    await this.swept;
    // One temp name per target and writer: a kill mid-write leaves it, and the sweep of the next
    // process removes it; another process writing the same target at once has its own.
    const temp = path.join(path.dirname(target), tempBaseName(target, 'tmp', this.writer));
    await this.writing.run(target, () => this.writeVia(relPath, target, temp, content));
    await this.removeDeadWriters(target);
  }

  /** The temp files of `target` that dead agents' writes of it left (SharedWriting); best effort. */
  private async removeDeadWriters(target: string): Promise<void> {
    if (!this.options.deadWriters) return;
    try {
      for (const writer of await this.options.deadWriters()) {
        await fs.rm(path.join(path.dirname(target), tempBaseName(target, 'tmp', writer)), { force: true });
      }
    } catch (err) {
      this.options.log?.debug({ err, path: target }, 'dead agents’ temp files not removed');
    }
  }

  private async writeVia(
    relPath: string,
    target: string,
    temp: string,
    content: OutputContent,
  ): Promise<void> {
    try {
      // The output folder and every level in it: real directories, never links; checked before a
      // missing level is made (mkdir -p through a link would make it elsewhere) and after.
      await assertRealPath(this.root, path.dirname(target));
      // The ERP's group reads what lands here: new folders take the parent's group and access.
      this.sayMade(await makeSharedDir(path.dirname(target)));
      await assertRealPath(this.root, path.dirname(target));
      if (typeof content === 'function') {
        await pipeline(content(), createWriteStream(temp, { flags: 'w', mode: this.fileMode, flush: true }));
      } else {
        const handle = await fs.open(temp, 'w', this.fileMode);
        try {
          await handle.writeFile(content);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      crashPoint('mid-output');
      await fs.rename(temp, target);
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw new DocexError('DOCEX_OUTPUT_WRITE', `could not write ${relPath} to ${this.description}`, {
        cause: err,
      });
    }
  }

  /** A line when the output folder itself (and any folder above it) was made: never silently. */
  private sayMade(made: string[]): void {
    const root = path.resolve(this.root);
    const outside = made.filter((dir) => !path.resolve(dir).startsWith(root + path.sep));
    if (outside.length === 0 || !this.options.log) return;
    this.options.log.info(
      { output: this.options.at ?? 'target', path: root, created: outside },
      'output folder created',
    );
  }

  /**
   * Before this process's first write: temp files a killed process left whose output was not
   * written again since (a Peppol document the next run had not re-saved when it stopped). Alone
   * on the folder, those last touched before this process started: a write in flight keeps its
   * temp file fresh. On a shared folder another agent's write may have started before this
   * process and paused (its text read page by page), on a host whose clock differs: only this
   * writer's temp files last touched before this process started, and others untouched for
   * SHARED_TEMP_STALE_MS.
   */
  private async sweepStale(): Promise<void> {
    const started = performance.timeOrigin;
    const ours = `-${this.writer}.tmp`;
    const stale = this.options.shared
      ? (name: string, mtimeMs: number) =>
          (name.endsWith(ours) && mtimeMs < started) || mtimeMs < Date.now() - SHARED_TEMP_STALE_MS
      : (_name: string, mtimeMs: number) => mtimeMs < started;
    const walk = async (dir: string, depth: number): Promise<void> => {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && depth > 0) await walk(full, depth - 1);
        else if (entry.isFile() && TEMP_NAME.test(entry.name)) {
          const st = await fs.stat(full).catch(() => undefined);
          if (st && stale(entry.name, st.mtimeMs)) await fs.rm(full, { force: true });
        }
      }
    };
    // Proofs sit two folders down (<date>/<stem>/), statuses one.
    await walk(this.root, 2);
  }

  async exists(relPath: string): Promise<boolean> {
    return fs.lstat(resolveInside(this.root, relPath)).then(
      () => true,
      () => false,
    );
  }

  async sizeOf(relPath: string): Promise<number | undefined> {
    return fs.stat(resolveInside(this.root, relPath)).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
  }

  async removeOlderThan(cutoffMs: number): Promise<Removed> {
    try {
      return await removeOldLocal(this.root, cutoffMs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { files: 0, bytes: 0 };
      throw err;
    }
  }

  async close(): Promise<void> {}
}
