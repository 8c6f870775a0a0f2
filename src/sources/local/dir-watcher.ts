/**
 * One watch on the drop folder itself (inotify / ReadDirectoryChangesW / FSEvents through fs.watch),
 * and for a recursive folder one on each sub-folder it takes files from (TreeWatcher).
 * Not chokidar: chokidar puts one fs.watch on every file it lists, so a 100,000-file backlog would
 * exhaust the watch limit and memory (figures: docs/benchmarks.md). Events only wake the stat loop
 * up; the stat loop decides, so a lost event costs latency (the periodic rescan finds the file),
 * never a file.
 */
import { type FSWatcher, watch } from 'node:fs';
import path from 'node:path';
import { nameOfBytes } from './entry-name.js';

export interface DirWatchHandlers {
  /** A name in the folder was created, renamed in/out or written. */
  onName(name: string): void;
  /** The platform gave no file name (or dropped events): rescan the folder. */
  onRescan(): void;
  onError(err: Error): void;
}

export interface DirWatcher {
  close(): void;
}

export function watchDirectory(dir: string, handlers: DirWatchHandlers): DirWatcher {
  let watcher: FSWatcher | undefined = watch(
    dir,
    { persistent: true, recursive: false, encoding: 'buffer' },
    (_event, filename) => {
      const entry = filename && filename.length > 0 ? nameOfBytes(filename) : undefined;
      // A name that is not UTF-8 can only be reached through the scan, which reads bytes.
      if (entry !== undefined && entry.raw === undefined) handlers.onName(entry.name);
      else handlers.onRescan();
    },
  );
  watcher.on('error', (err) => {
    handlers.onError(err);
  });
  return {
    close() {
      watcher?.close();
      watcher = undefined;
    },
  };
}

export interface TreeWatchHandlers {
  /** An entry of a watched folder changed: its path relative to the root (`acme/x.pdf`). */
  onName(relative: string): void;
  onRescan(): void;
  /** The root's watch failed while running. */
  onError(err: Error): void;
  /**
   * A sub-folder could not be watched because the watch limit is reached (inotify's
   * max_user_watches: ENOSPC); said once: the folders not watched are found by rescans.
   */
  onLimit(err: Error, watched: number): void;
}

const LIMIT_ERRNOS = new Set(['ENOSPC', 'EMFILE']);

/**
 * The watches of a recursive folder: one per folder (inotify watches no tree), kept in step with
 * the scans, which add each sub-folder they enter and drop those gone. Events only wake the stat
 * loop: a folder left unwatched (the limit reached) costs latency until the next scan, never a file.
 */
export class TreeWatcher {
  private readonly watchers = new Map<string, DirWatcher>();
  private limited = false;

  constructor(
    private readonly root: string,
    private readonly handlers: TreeWatchHandlers,
    private readonly watch: typeof watchDirectory = watchDirectory,
  ) {}

  /** Watches the root; throws as fs.watch does (the caller falls back to polling). */
  start(): void {
    this.watchers.set(
      '',
      this.watch(this.root, {
        onName: (name) => this.handlers.onName(name),
        onRescan: () => this.handlers.onRescan(),
        onError: (err) => this.handlers.onError(err),
      }),
    );
  }

  /** Folders watched, the root included. */
  get size(): number {
    return this.watchers.size;
  }

  /** Whether the watch limit was reached: no sub-folder is added any more. */
  get limitReached(): boolean {
    return this.limited;
  }

  has(relative: string): boolean {
    return this.watchers.has(relative);
  }

  /** Watches a sub-folder (`acme/invoices`) once; a folder that cannot be watched is left to the scans. */
  add(relative: string): void {
    if (this.limited || this.watchers.has(relative) || !this.watchers.has('')) return;
    try {
      this.watchers.set(
        relative,
        this.watch(path.join(this.root, ...relative.split('/')), {
          onName: (name) => this.handlers.onName(`${relative}/${name}`),
          onRescan: () => this.handlers.onRescan(),
          // A watched folder removed or moved away: forgotten, and the tree scanned again.
          onError: () => {
            this.forget(relative);
            this.handlers.onRescan();
          },
        }),
      );
    } catch (err) {
      const errno = (err as NodeJS.ErrnoException).code;
      if (errno !== undefined && LIMIT_ERRNOS.has(errno)) {
        this.limited = true;
        this.handlers.onLimit(err as Error, this.watchers.size);
      }
      // Otherwise gone or shut (ENOENT, EACCES): the scan that meets it again says so.
    }
  }

  /** Stops watching a sub-folder and every folder below it. */
  forget(relative: string): void {
    for (const [key, watcher] of this.watchers) {
      if (key !== '' && (key === relative || key.startsWith(`${relative}/`))) {
        watcher.close();
        this.watchers.delete(key);
      }
    }
  }

  /** After a whole scan: the sub-folders it did not enter (removed, renamed) are not watched any more. */
  keepOnly(entered: ReadonlySet<string>): void {
    for (const [key, watcher] of this.watchers) {
      if (key !== '' && !entered.has(key)) {
        watcher.close();
        this.watchers.delete(key);
      }
    }
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}
