/**
 * The running side of a source: what the agent holds of any folder's source (`FolderSource`) and
 * what it lends one when it opens it (`SourceDeps`). Sources do not know the pipeline: its part
 * (its accept, which names are sidecars, the reason files) comes in as `SourceHooks`. Each kind's
 * factory builds its source from these (`open-source.ts`).
 */
import type { Clock } from '../core/clock.js';
import type { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { JournalItem, JournalStore } from '../journal/index.js';
import type { RejectedEntry } from './local/local-source.js';
import type { ProbeReadable } from './local/observe-file.js';
import type { UnreadableFile } from './local/unreadable.js';
import type { RemoteSideFile } from './sftp/remote-finalize.js';
import type { SharedClaims } from './sftp/source.js';

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

/** A claimed file as the pipeline takes it: its claimed copy on this machine. */
export interface AcceptedFile {
  name: string;
  /** Where it was dropped: the journal records it under this path. */
  originalPath: string;
  claimedPath: string;
}

/** The pipeline's part, lent to every source. */
export interface SourceHooks {
  /**
   * The pipeline's accept. `false`: not taken (unknown folder, stopping); `onLost`: taken, then
   * failed before it became an item.
   */
  accept(folder: string, file: AcceptedFile, onLost?: (err: unknown) => void): boolean;
  /** Names that are not items of their own (payload-pdf sidecars): they travel with their data file. */
  isCompanion(name: string): boolean;
  companionsOf(name: string): string[];
  /** The reason files written beside a rejected file kept remotely (the remote error folder). */
  errorFiles(item: JournalItem, now: number): RemoteSideFile[];
  /** An entry refused before it was a file (a link, a FIFO, a name that is not UTF-8): placed and said. */
  rejectEntry(entry: RejectedEntry): Promise<void>;
  /** Files wait in the folder to settle: what their intake needs (an inspection worker) is readied meanwhile. */
  prepareIntake?(): void;
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

export interface SourceDeps {
  hooks: SourceHooks;
  /** A remote source matches what its claim folder holds against it. */
  journal: Pick<JournalStore, 'byPath' | 'holds'>;
  /** Several agents share the journal: a remote source claims into a folder of this agent's own. */
  sharedClaims?: SharedClaims;
  clock: Clock;
  log: Logger;
  timing?: SourceTiming;
  /** Its `.processing/` (or spool) proved not a real directory while running: the folder must stop. */
  onUnsafe?: (err: DocexError) => void;
  /** A local folder's list of files the agent cannot read, stat or move changed. */
  onUnreadableChange?: () => void;
  /** The folder's key in the configuration (`folders[2]`): a missing drop folder names it. */
  at?: string;
  /**
   * Folders the agent writes into besides this folder's own (the state folder, local output
   * folders, other folders' archive and error folders): a recursive folder never enters them.
   */
  agentDirs?: readonly string[];
}
