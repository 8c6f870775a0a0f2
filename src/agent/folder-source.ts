/**
 * The source of one running folder: where its complete files come from before the pipeline takes
 * them. Local folders today; the factory is the one place a new kind of source joins.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { FolderRuntime } from '../pipeline/types.js';
import { LocalSource } from '../sources/local/index.js';

/** What the controller needs of any source: lifecycle and backpressure. */
export interface FolderSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Keep observing, hand nothing out until `resume()`. */
  pause(): void;
  resume(): void;
  /** Look for ready files now rather than at the next pass. */
  tick(): Promise<void>;
}

export interface SourceTiming {
  statIntervalMs?: number;
  rescanIntervalMs?: number;
  watch?: boolean;
}

export interface FolderSourceDeps {
  pipeline: Pipeline;
  clock: Clock;
  log: Logger;
  timing?: SourceTiming;
}

export function createFolderSource(rt: FolderRuntime, deps: FolderSourceDeps): FolderSource {
  const folder = rt.config;
  const timing = deps.timing ?? {};
  return new LocalSource({
    folder: {
      name: folder.name,
      path: folder.source.path,
      include: folder.include,
      exclude: folder.exclude,
      stability: folder.stability,
      usePolling: folder.source.usePolling,
      pollIntervalMs: folder.source.pollIntervalMs,
    },
    clock: deps.clock,
    log: deps.log.child({ folder: folder.name }),
    onReady: async (file) => {
      deps.pipeline.accept(folder.name, {
        name: file.name,
        originalPath: file.originalPath,
        claimedPath: file.claimedPath,
      });
    },
    ...(timing.statIntervalMs === undefined ? {} : { statIntervalMs: timing.statIntervalMs }),
    ...(timing.rescanIntervalMs === undefined ? {} : { rescanIntervalMs: timing.rescanIntervalMs }),
    ...(timing.watch === undefined ? {} : { watch: timing.watch }),
  });
}
