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
    ...(deps.onUnsafe ? { onUnsafe: deps.onUnsafe } : {}),
    ...(deps.onUnreadableChange ? { onUnreadableChange: deps.onUnreadableChange } : {}),
    // Archive and error folders inside the drop folder are the agent's own, not drops.
    ownDirs: [folder.archiveDir, folder.errorDir]
      .filter((dir) => path.dirname(path.resolve(dir)) === path.resolve(source.path))
      .map((dir) => path.basename(dir)),
    ...(timing.statIntervalMs === undefined ? {} : { statIntervalMs: timing.statIntervalMs }),
    ...(timing.rescanIntervalMs === undefined ? {} : { rescanIntervalMs: timing.rescanIntervalMs }),
    ...(timing.watch === undefined ? {} : { watch: timing.watch }),
    ...(timing.probeReadable ? { probeReadable: timing.probeReadable } : {}),
  });
}
