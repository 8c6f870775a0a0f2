/** Builds the source of one running local folder from its configuration and what the agent lends. */
import path from 'node:path';
import type { FolderConfig } from '../../config/index.js';
import type { FolderSource, SourceDeps } from '../folder-source.js';
import type { LocalSourceConfig } from './kind.js';
import { LocalSource } from './local-source.js';

export function createLocalFolderSource(
  folder: FolderConfig & { source: LocalSourceConfig },
  deps: SourceDeps,
): FolderSource {
  const { source } = folder;
  const timing = deps.timing ?? {};
  return new LocalSource({
    folder: {
      name: folder.name,
      path: source.path,
      include: folder.include,
      exclude: folder.exclude,
      stability: folder.stability,
      order: folder.order,
      maxFilesPerScan: folder.maxFilesPerScan,
      recursive: folder.recursive,
      usePolling: source.usePolling,
      pollIntervalMs: source.pollIntervalMs,
    },
    ...(deps.at === undefined ? {} : { at: deps.at }),
    clock: deps.clock,
    // LocalSource names its folder on each line itself.
    log: deps.log,
    accept: async (file) => {
      deps.hooks.accept(folder.name, {
        name: file.name,
        originalPath: file.originalPath,
        claimedPath: file.claimedPath,
      });
    },
    onRejected: (entry) => deps.hooks.rejectEntry(entry),
    onWaiting: () => deps.hooks.prepareIntake?.(),
    ...(deps.onUnsafe ? { onUnsafe: deps.onUnsafe } : {}),
    ...(deps.onUnreadableChange ? { onUnreadableChange: deps.onUnreadableChange } : {}),
    // Archive and error folders inside the drop folder are the agent's own, not drops; a recursive
    // folder's tree may hold any folder of the agent (output and state folders, other folders'),
    // at any depth. A flat folder keeps to its own folders just inside it.
    ownDirs: folder.recursive
      ? ownDirsBelow(source.path, [folder.archiveDir, folder.errorDir, ...(deps.agentDirs ?? [])])
      : ownDirsBelow(source.path, [folder.archiveDir, folder.errorDir]).filter((dir) => !dir.includes('/')),
    ...(timing.statIntervalMs === undefined ? {} : { statIntervalMs: timing.statIntervalMs }),
    ...(timing.rescanIntervalMs === undefined ? {} : { rescanIntervalMs: timing.rescanIntervalMs }),
    ...(timing.watch === undefined ? {} : { watch: timing.watch }),
    ...(timing.probeReadable ? { probeReadable: timing.probeReadable } : {}),
  });
}

/** The folders of `dirs` that lie inside the drop folder, as paths relative to it (POSIX). */
export function ownDirsBelow(dropDir: string, dirs: readonly string[]): string[] {
  const root = path.resolve(dropDir);
  return dirs.flatMap((dir) => {
    const relative = path.relative(root, path.resolve(dir));
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return [];
    return [relative.split(path.sep).join('/')];
  });
}
