/**
 * One watch on the drop folder itself (inotify / ReadDirectoryChangesW / FSEvents through fs.watch).
 * Not chokidar: chokidar puts one fs.watch on every file it lists, measured at 20,001 inotify
 * watches and 152 MB RSS for 20,000 files, so a 100,000-file backlog would exhaust the watch limit
 * and memory. Events only wake the stat loop up; the stat loop decides, so a lost event costs
 * latency (the periodic rescan finds the file), never a file.
 */
import { type FSWatcher, watch } from 'node:fs';

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
    { persistent: true, recursive: false },
    (_event, filename) => {
      if (typeof filename === 'string' && filename.length > 0) handlers.onName(filename);
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
