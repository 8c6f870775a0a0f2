/**
 * One watch on the drop folder itself (inotify / ReadDirectoryChangesW / FSEvents through fs.watch).
 * Not chokidar: chokidar puts one fs.watch on every file it lists, so a 100,000-file backlog would
 * exhaust the watch limit and memory (figures: docs/benchmarks.md). Events only wake the stat loop
 * up; the stat loop decides, so a lost event costs latency (the periodic rescan finds the file),
 * never a file.
 */
import { type FSWatcher, watch } from 'node:fs';
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
