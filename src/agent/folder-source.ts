/**
 * The source of one running folder: where its complete files come from before the pipeline takes
 * them: a local folder or an SFTP folder; the factory is the one place a new kind of source joins.
 */
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import type { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { JournalItem, JournalStore } from '../journal/index.js';
import { errorRecord, errorText } from '../pipeline/outcome-files.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { rejectEntry } from '../pipeline/reject-entry.js';
import { isSidecarName, sidecarPathOf, usesSidecars } from '../pipeline/sidecar.js';
import type { FolderRuntime } from '../pipeline/types.js';
import { LocalSource, type ProbeReadable, type UnreadableFile } from '../sources/local/index.js';
import type { SharedClaims } from '../sources/sftp/source.js';
import { createSftpFolderSource } from '../sources/sftp/source-factory.js';

/** What the controller needs of any source: lifecycle and backpressure. */
export interface FolderSource {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Keep observing, hand nothing out until `resume()`. */
  pause(): void;
  resume(): void;
  /** Look for ready files now rather than at the next pass. */
  tick(): Promise<void>;
  /** An item of this folder became done or rejected (SFTP: the remote file is moved then). */
  finished?(item: JournalItem): void;
  /** This agent left an item of this folder to another agent (SFTP: its copy is forgotten). */
  left?(item: JournalItem): void;
  /**
   * SFTP: `stop` in two halves. stopIntake takes no more files; close (after the pipeline let its
   * items finish) closes the connection their remote moves need.
   */
  stopIntake?(): Promise<void>;
  close?(): Promise<void>;
  /** Local folders: the files reported as ones the agent cannot read, stat or move. */
  unreadableFiles?(): UnreadableFile[];
}

export interface SourceTiming {
  statIntervalMs?: number;
  rescanIntervalMs?: number;
  watch?: boolean;
  /** SFTP folders: poll period instead of their pollIntervalMs (tests). */
  sftpPollIntervalMs?: number;
  /** Local folders: whether a file can be opened for reading (tests inject EACCES: root reads any file). */
  probeReadable?: ProbeReadable;
}

export interface FolderSourceDeps {
  pipeline: Pipeline;
  /** SFTP folders match what their remote `.processing/` holds against it. */
  journal: Pick<JournalStore, 'byPath' | 'holds'>;
  /** Several agents share the journal: SFTP folders claim into a folder of this agent's own. */
  sftpClaims?: SharedClaims;
  clock: Clock;
  log: Logger;
  timing?: SourceTiming;
  /** Its `.processing/` (or spool) proved not a real directory while running: the folder must stop. */
  onFolderUnsafe?: (folder: string, err: DocexError) => void;
  /** A local folder's list of files the agent cannot read, stat or move changed. */
  onUnreadableChange?: () => void;
  /** The folder's key in the configuration (`folders[2]`): a missing remote drop folder names it. */
  at?: string;
}

export function createFolderSource(runtime: FolderRuntime, deps: FolderSourceDeps): FolderSource {
  const folder = runtime.config;
  const timing = deps.timing ?? {};
  const onFolderUnsafe = deps.onFolderUnsafe;
  const onUnsafe = onFolderUnsafe ? { onUnsafe: (err: DocexError) => onFolderUnsafe(folder.name, err) } : {};
  if (folder.source.type === 'sftp') {
    return createSftpFolderSource(folder, {
      accept: (name, file, onLost) => deps.pipeline.accept(name, file, onLost),
      isCompanion: (name) => isSidecarName(runtime, name),
      companionsOf: (name) => (usesSidecars(runtime) ? [sidecarPathOf(runtime, name)] : []),
      errorFiles: (item, now) => {
        const record = errorRecord(item, now);
        return [
          { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
          { suffix: '.error.txt', content: errorText(record) },
        ];
      },
      journal: deps.journal,
      ...(deps.sftpClaims ? { shared: deps.sftpClaims } : {}),
      clock: deps.clock,
      log: deps.log,
      ...onUnsafe,
      ...(timing.sftpPollIntervalMs === undefined ? {} : { pollIntervalMs: timing.sftpPollIntervalMs }),
      ...(deps.at === undefined ? {} : { at: deps.at }),
    });
  }
  const source = folder.source;
  return new LocalSource({
    folder: {
      name: folder.name,
      path: source.path,
      include: folder.include,
      exclude: folder.exclude,
      stability: folder.stability,
      usePolling: source.usePolling,
      pollIntervalMs: source.pollIntervalMs,
    },
    ...(deps.at === undefined ? {} : { at: deps.at }),
    clock: deps.clock,
    // LocalSource names its folder on each line itself.
    log: deps.log,
    accept: async (file) => {
      deps.pipeline.accept(folder.name, {
        name: file.name,
        originalPath: file.originalPath,
        claimedPath: file.claimedPath,
      });
    },
    onRejected: async (entry) => {
      const placed = await rejectEntry(entry, {
        folder: folder.name,
        workflowId: folder.workflowId,
        errorDir: folder.errorDir,
        now: deps.clock.now(),
      });
      deps.log.warn({ folder: folder.name, file: entry.name, code: entry.code, placed }, 'entry refused');
    },
    ...onUnsafe,
    ...(deps.onUnreadableChange ? { onUnreadableChange: deps.onUnreadableChange } : {}),
    ownDirs: [folder.archiveDir, folder.errorDir]
      .filter((dir) => path.dirname(path.resolve(dir)) === path.resolve(source.path))
      .map((dir) => path.basename(dir)),
    ...(timing.statIntervalMs === undefined ? {} : { statIntervalMs: timing.statIntervalMs }),
    ...(timing.rescanIntervalMs === undefined ? {} : { rescanIntervalMs: timing.rescanIntervalMs }),
    ...(timing.watch === undefined ? {} : { watch: timing.watch }),
    ...(timing.probeReadable ? { probeReadable: timing.probeReadable } : {}),
  });
}
