/**
 * The I/O shell around the stability core for one local drop folder: a streamed start-up scan, a
 * folder watch (or, for NFS/SMB, periodic scans), and a stat loop over pending names that claims
 * complete files into `.processing/` and hands them to the pipeline one at a time, in the folder's
 * order (scan-order.ts: oldest first, or by name; at most `maxFilesPerScan` per pass): the scan
 * holds names in that order, and each pass sorts the complete ones of a chunk of them.
 *
 * A recursive folder takes files in its sub-folders too, down to its depth: pending names are then
 * paths relative to the drop folder (`acme/invoices/x.pdf`), claimed into the same sub-path of
 * `.processing/`. Hidden sub-folders, links, the agent's own folders and sub-folders whose name is
 * not a valid file name are never entered; each folder entered is watched (TreeWatcher).
 */

import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../core/clock.js';
import { GarbagePacer } from '../../core/collect.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { type DocexError, isDocexError } from '../../core/errors.js';
import { errnoOf, type RenameFn } from '../../core/fs.js';
import type { Logger } from '../../core/logger.js';
import { assertRealDir, FOLDER_UNSAFE_CODE } from '../../core/real-dir.js';
import { nameFault } from '../../domain/file-names.js';
import { type DropFolderTrouble, missingDropFolder } from '../drop-folder.js';
import { createNameFilter } from '../glob.js';
import { FirstInOrder, pickForScan, type ScanKey } from '../scan-order.js';
import {
  claimFile,
  FILE_IN_THE_WAY,
  fileInTheWay,
  PROCESSING_DIR,
  releaseClaim,
  removeEmptiedClaimDirs,
} from './claim.js';
import { TreeWatcher, type watchDirectory } from './dir-watcher.js';
import { type EntryName, entryPath, readEntries } from './entry-name.js';
import {
  type FileAccess,
  type FileLook,
  type LstatFn,
  lookAt,
  lstatFile,
  type ProbeReadable,
} from './observe-file.js';
import {
  dataNameOfMarker,
  firstLookDue,
  isCandidateName,
  markerSuffixes,
  type Observation,
  observe,
  type StabilityState,
} from './stability.js';
import type { ClaimedFile, LocalFolderConfig } from './types.js';
import {
  agentAccount,
  describeUnreadable,
  UNREADABLE_CODE,
  type UnreadableCause,
  type UnreadableFile,
} from './unreadable.js';

export type { ClaimedFile, LocalFolderConfig } from './types.js';

export interface LocalSourceOptions {
  folder: LocalFolderConfig;
  /** The folder's key in the configuration (`folders[2]`), named when the drop folder is missing. */
  at?: string;
  clock: Clock;
  log: Logger;
  /** The pipeline's accept: enqueues, returns; the stat loop waits for it (a slow one slows intake). */
  accept: (file: ClaimedFile) => Promise<void>;
  /** Stat loop period; 0 = no timer (tests call `tick()`). Default 500 ms. */
  statIntervalMs?: number;
  /** Safety-net rescan for missed events; 0 = never. Default 60 s. */
  rescanIntervalMs?: number;
  /** Pending names held at most; the scan stops there and resumes once they drain. Default 10,000. */
  maxPending?: number;
  /** Entries a scan lists between two full GCs (tests: fewer). Default SCAN_COLLECT_EVERY_ENTRIES. */
  collectEveryEntries?: number;
  /** Default true; false = start-up scan and rescans only. */
  watch?: boolean;
  probeReadable?: ProbeReadable;
  /** The stat of a pending file (tests inject EACCES here: root may stat anything). */
  lstat?: LstatFn;
  /** The files reported as unreadable changed (one more, or one taken or gone). */
  onUnreadableChange?: () => void;
  /**
   * A link or a special file (FIFO, socket, device) in the drop folder: never opened or followed,
   * handed over to be moved to the error folder. Without it such entries are only logged.
   */
  onRejected?: (entry: RejectedEntry) => Promise<void>;
  /** `.processing/` or the error folder proved not a real directory (DOCEX_FOLDER_UNSAFE): the folder must stop. */
  onUnsafe?: (err: DocexError) => void;
  /**
   * Paths relative to the drop folder (POSIX: `out/archive`) of folders the agent writes into (its
   * archive or error folder, an output folder kept inside the drop folder); `.processing` always
   * counts. Such a name as a link is never moved away like a dropped link: the folder is unsafe
   * (onUnsafe). A recursive folder never enters them.
   */
  ownDirs?: readonly string[];
  rename?: RenameFn;
  watchDirectory?: typeof watchDirectory;
  /**
   * Names became pending in an empty folder, or a scan of one listed its first candidate: their
   * intake (an inspection worker) can be readied while they settle and the scan goes on, rather
   * than after the claim.
   */
  onWaiting?: () => void;
}

export interface RejectedEntry {
  /** For people: a name that is not UTF-8 shows its bad bytes as U+FFFD. */
  name: string;
  /** The sub-folders of a recursive folder it lies in (`['acme', 'invoices']`): its error place keeps them. */
  subFolders?: readonly string[];
  /** For the move: bytes when the name has no UTF-8 form. */
  path: string | Buffer;
  code: ErrorCode;
  reason: string;
  /** What the operator should do, the last line of the reason file. */
  fix: string;
}

type RejectedKind = 'symlink' | 'special' | 'bad-name';

/** The warning when an entry cannot be moved to the error folder (no handler, paused, stopping). */
const IGNORED: Record<RejectedKind, string> = {
  symlink: 'symlink ignored',
  special: 'special file ignored',
  'bad-name': 'file name not UTF-8, ignored',
};

const REJECTIONS: Record<RejectedKind, (name: string) => Pick<RejectedEntry, 'code' | 'reason' | 'fix'>> = {
  symlink: (name) => ({
    code: 'DOCEX_INPUT_SYMLINK',
    reason: `${JSON.stringify(name)} is a symbolic link; drop the file itself, not a link to it.`,
    fix: 'Drop the file itself (a regular file) and it will be taken.',
  }),
  special: (name) => ({
    code: 'DOCEX_INPUT_NOT_A_FILE',
    reason: `${JSON.stringify(name)} is not a regular file (a pipe, socket or device).`,
    fix: 'Drop the file itself (a regular file) and it will be taken.',
  }),
  'bad-name': (name) => ({
    code: 'DOCEX_INPUT_BAD_NAME',
    reason:
      `${JSON.stringify(name)}: the file name is not valid UTF-8 (each \ufffd stands for a byte that is not); ` +
      'it was probably written in a legacy encoding such as Latin-1.',
    fix: 'Have the ERP write UTF-8 file names, or rename the file, and drop it again.',
  }),
};

interface Pending {
  state?: StabilityState;
  /** Seen by a scan's stat: not looked at again before this (clock ms), when its settle time is up. */
  dueAt?: number;
  retryAt?: number;
  /** When it was last looked at (clock ms). */
  lookedAt?: number;
  /** Its last look, when that found it complete: claimed from without another look for a while. */
  complete?: { obs: Observation; access: FileAccess; at: number };
}

/** A scan's candidate: its stat (oldest first) is its first observation, its settle clock started then. */
interface ScannedName extends ScanKey {
  seen?: StabilityState;
}

/**
 * A full GC after this many entries of one scan (core/collect.ts GarbagePacer): a scan of a
 * 100,000-file folder left about 30 MB of promoted garbage (its dirents, stats and keys), which V8
 * kept as heap once collected, and each rescan while a backlog drained grew the resident set
 * again (issue 30: +15 MiB at a rescan of 95,000 files). A collection is 30-110 ms.
 */
export const SCAN_COLLECT_EVERY_ENTRIES = 25_000;

/** Names whose mtimes a scan asks for at once (the libuv pool runs 4 at a time). */
const SCAN_STAT_BATCH = 64;

/** Pending names a pass looks at before it claims the complete ones among them. */
const OBSERVE_CHUNK = 64;

/** A pending file found complete in this pass: claimed once the rest of its chunk was looked at. */
interface Complete {
  name: string;
  obs: Observation;
  entry: Pending;
  access: FileAccess;
}

/** A pending file found unreadable, unstat-able or unmovable: since when, and once reported, what was said. */
interface Blocked {
  cannot: UnreadableCause;
  since: number;
  reported?: UnreadableFile;
}

/**
 * How long a complete file must stay unreadable (or unstat-able) before it is reported: a producer
 * that chmods after writing is not reported. A file that cannot be moved is reported at once.
 */
const UNREADABLE_GRACE_MS = 5_000;
const PERMISSION_ERRNOS = new Set(['EACCES', 'EPERM']);

const CLAIM_RETRY_MS = 30_000;
/**
 * Names looked at per pass while intake is paused: the ones next in line keep their settle
 * clocks running, and a backlog of thousands is not stat'ed twice a second for nothing.
 */
export const PAUSED_LOOKAHEAD = 256;

/**
 * A name found complete is claimed within this long of that look without another one (the claim
 * compares size and mtime after its rename), and while paused another name is looked at again only
 * this long after its last look: the pipeline resumes the source once per file it finishes, and
 * each resume used to look at the same names again.
 */
const LOOK_GAP_MS = 500;
const MAX_WARNED = 1_000;

/** `acme/invoices/x.pdf` → its folders and its name. */
function splitRelative(relative: string): { folders: string[]; name: string } {
  const segments = relative.split('/');
  return { folders: segments.slice(0, -1), name: segments[segments.length - 1]! };
}

export class LocalSource {
  private readonly dir: string;
  private readonly processingDir: string;
  private readonly ownDirs: ReadonlySet<string>;
  private readonly included: (name: string) => boolean;
  private readonly pending = new Map<string, Pending>();
  private readonly warned = new Set<string>();
  /** Pending names whose claim waits for a claimed file of their sub-folder's name, said once each. */
  private readonly inTheWay = new Set<string>();
  /** Pending names the agent cannot read, stat or move (bounded by `pending`). */
  private readonly blocked = new Map<string, Blocked>();
  /** The drop folder's group (its setgid bit gives it to new files): named in the fix. */
  private dirGid: number | undefined;
  private readonly maxPending: number;
  private readonly timers: NodeJS.Timeout[] = [];
  private statTimer: NodeJS.Timeout | undefined;
  /** A pass when the first name a scan saw is due (its settle time up), rather than at the next period. */
  private dueTimer: NodeJS.Timeout | undefined;
  /** The soonest `dueAt` a pass skipped (clock ms). */
  private nextDue = Number.POSITIVE_INFINITY;
  private watcher: TreeWatcher | undefined;
  /** Sub-folder levels taken (0: the drop folder only). */
  private readonly depth: number;
  private scanNeeded = false;
  private paused = false;
  private stopped = true;
  private ticking: Promise<void> | undefined;
  /** The stat loop runs on its timer (not with statIntervalMs 0, where tests call tick()). */
  private looping = false;
  /** Asked for a pass while one runs: run another right after it. */
  private again = false;
  /** The scan in progress said names are waiting: its names, noticed at its end, need not say it again. */
  private toldByScan = false;

  constructor(private readonly options: LocalSourceOptions) {
    this.dir = path.resolve(options.folder.path);
    this.processingDir = path.join(this.dir, PROCESSING_DIR);
    this.ownDirs = new Set([PROCESSING_DIR, ...(options.ownDirs ?? [])]);
    this.included = createNameFilter({ include: options.folder.include, exclude: options.folder.exclude });
    this.maxPending = options.maxPending ?? 10_000;
    this.depth = options.folder.recursive?.depth ?? 0;
  }

  private get log(): Logger {
    return this.options.log;
  }

  private get folderName(): string {
    return this.options.folder.name;
  }

  /** Watch first, then scan, so nothing dropped during the scan is missed. */
  async start(): Promise<void> {
    // The agent checked it before (agent/folders.ts): here only if it went since.
    const st = await fs
      .stat(this.dir)
      .catch(
        (err: NodeJS.ErrnoException): DropFolderTrouble =>
          err.code === 'ENOENT' ? 'does not exist' : `cannot be reached (${err.code ?? err.message})`,
      );
    if (typeof st === 'string' || !st.isDirectory()) {
      throw missingDropFolder(
        this.options.folder,
        this.dir,
        this.options.at,
        typeof st === 'string' ? st : 'is not a folder',
      );
    }
    this.dirGid = st.gid;
    this.stopped = false;
    const { folder } = this.options;
    if (!folder.usePolling && (this.options.watch ?? true)) {
      const tree = new TreeWatcher(
        this.dir,
        {
          onName: (name) => this.noticeEvent(name),
          onRescan: () => this.requestScan(),
          onError: (err) => this.log.error({ folder: this.folderName, err }, 'folder watch failed'),
          onLimit: (err, watched) => this.watchLimitReached(err, watched),
        },
        this.options.watchDirectory,
      );
      try {
        tree.start();
        this.watcher = tree;
      } catch (err) {
        // e.g. ENOSPC when the inotify watch limit is reached: scanning still finds every file.
        this.log.warn({ folder: this.folderName, err }, 'folder watch unavailable, polling instead');
      }
    }
    if (folder.usePolling || (this.watcher === undefined && (this.options.watch ?? true))) {
      this.every(folder.pollIntervalMs ?? 5_000, () => this.requestScan());
    }
    await this.scan();
    this.looping = this.statIntervalMs > 0;
    this.armStatLoop();
    // The first pass now (it arms the timer of the names the scan saw), not a period later.
    if (this.pending.size > 0) this.wake();
    this.every(this.options.rescanIntervalMs ?? 60_000, () => this.requestScan());
    this.log.info({ folder: this.folderName, pending: this.pending.size }, 'folder source started');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.looping = false;
    for (const t of this.timers.splice(0)) clearInterval(t);
    this.disarmStatLoop();
    clearTimeout(this.dueTimer);
    this.watcher?.close();
    this.watcher = undefined;
    await this.ticking;
  }

  /** Backpressure: keep observing, hand nothing out until `resume()`. */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    // The pipeline has room now: claim at once rather than at the next period.
    this.wake();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** The files reported as ones the agent cannot read, stat or move, still waiting in the folder. */
  unreadableFiles(): UnreadableFile[] {
    return [...this.blocked.values()].flatMap((b) => (b.reported ? [b.reported] : []));
  }

  /** Folders watched (inotify watches on Linux): the drop folder and a recursive folder's sub-folders entered. */
  get watchedFolders(): number {
    return this.watcher?.size ?? 0;
  }

  /** Whether the stat loop's timer is running (only while names are pending or a scan is due). */
  get statLoopRunning(): boolean {
    return this.statTimer !== undefined;
  }

  private every(ms: number, fn: () => void): void {
    if (ms > 0) this.timers.push(setInterval(fn, ms).unref());
  }

  private get statIntervalMs(): number {
    return this.options.statIntervalMs ?? 500;
  }

  /**
   * The stat loop's timer runs only while names are pending or a scan is due: an idle folder
   * sleeps until its watch (or a rescan) reports a name, instead of waking twice a second.
   */
  private armStatLoop(): void {
    if (!this.looping || this.stopped || this.statTimer !== undefined) return;
    if (this.pending.size === 0 && !this.scanNeeded) return;
    this.statTimer = setInterval(() => void this.tick(), this.statIntervalMs).unref();
  }

  private disarmStatLoop(): void {
    clearInterval(this.statTimer);
    this.statTimer = undefined;
  }

  private requestScan(): void {
    this.scanNeeded = true;
    this.armStatLoop();
  }

  /** A pass now rather than at the next period (a name arrived, intake resumed); passes never overlap. */
  private wake(): void {
    if (!this.looping || this.stopped) return;
    if (this.ticking) this.again = true;
    else void this.tick();
  }

  /**
   * The name to observe for an entry: a marker's data file, the name itself, or none (not a
   * candidate). In a recursive folder names are relative paths; the rules read the last segment.
   */
  private candidateOf(relative: string): string | undefined {
    const { stability, tempSuffixes } = this.options.folder;
    const dataName = dataNameOfMarker(relative, markerSuffixes(stability));
    if (dataName !== undefined) return this.candidateOf(dataName);
    const { name } = splitRelative(relative);
    return isCandidateName(name, stability, this.included, tempSuffixes) ? relative : undefined;
  }

  /**
   * A name the watch reported. In a recursive folder a sub-folder made (or moved in) is entered by
   * a scan, and the watches of one removed are dropped.
   */
  private noticeEvent(relative: string): void {
    if (this.depth > 0 && this.mayBeFolder(relative)) void this.folderChanged(relative);
    this.notice(relative);
  }

  /** A name the watch reported that may be a sub-folder to enter or forget (a hidden one never is). */
  private mayBeFolder(relative: string): boolean {
    if (this.watcher?.has(relative)) return true;
    return !splitRelative(relative).name.startsWith('.') && this.candidateOf(relative) === undefined;
  }

  private async folderChanged(relative: string): Promise<void> {
    const st = await (this.options.lstat ?? lstatFile)(path.join(this.dir, relative)).catch(() => undefined);
    if (st === undefined) this.watcher?.forget(relative);
    else if (st.isDirectory() && !this.watcher?.has(relative)) this.requestScan();
  }

  /**
   * The watch limit reached: said once. The folders not watched are found by the periodic rescan
   * of the whole tree (every rescanIntervalMs), not by a faster poll: a large tree is costly to
   * scan (docs/benchmarks.md), and back-to-back scans would hold a core.
   */
  private watchLimitReached(err: Error, watched: number): void {
    this.log.warn(
      {
        folder: this.folderName,
        code: 'DOCEX_SOURCE_WATCH_LIMIT',
        watched,
        errno: (err as NodeJS.ErrnoException).code,
        rescanIntervalMs: this.options.rescanIntervalMs ?? 60_000,
      },
      'folder watch limit reached (fs.inotify.max_user_watches): files in the sub-folders not watched are found by the rescan every rescanIntervalMs; raise the limit and restart the agent (docs/configuration.md, Recursive folders)',
    );
  }

  /**
   * A name seen by the scan or the watcher; markers wake their data file up. `seen`: the scan's
   * stat of that very name, its first observation (its settle time runs from then).
   */
  notice(name: string, seen?: StabilityState): void {
    if (this.stopped) return;
    const candidate = this.candidateOf(name);
    if (candidate === undefined || this.pending.has(candidate)) return;
    if (this.pending.size >= this.maxPending) {
      this.scanNeeded = true;
      return;
    }
    if (this.pending.size === 0 && !this.toldByScan) this.options.onWaiting?.();
    const dueAt =
      seen !== undefined && candidate === name
        ? firstLookDue(seen, this.options.folder.stability)
        : undefined;
    this.pending.set(candidate, seen === undefined || dueAt === undefined ? {} : { state: seen, dueAt });
    this.wake();
  }

  /**
   * Streams the folder (opendir) so a 100,000-entry backlog is never held as one array: every
   * candidate is listed, and the first ones in the folder's order (as many as `pending` has room
   * for) become pending in that order; a later scan picks up the rest once those drained. A
   * recursive folder's sub-folders are listed after their parent, each watched as it is entered.
   */
  async scan(): Promise<void> {
    this.scanNeeded = false;
    const { order } = this.options.folder;
    const first = new FirstInOrder<ScannedName>(order, this.maxPending - this.pending.size);
    // Oldest first needs every candidate's mtime: stat'ed a batch at a time, side by side. That
    // stat is also the file's first observation, so its settle time runs while the scan goes on.
    let batch: string[] = [];
    const offerBatch = async () => {
      if (order !== 'mtime') {
        for (const name of batch) first.offer({ name, mtimeMs: Number.NaN });
        batch = [];
        return;
      }
      const stats = await Promise.all(batch.map((n) => this.statOf(n)));
      // After the stats answered: a settle time counted from here is never too long.
      const since = this.options.clock.now();
      for (const [i, name] of batch.entries()) {
        const st = stats[i];
        first.offer(
          st === undefined
            ? { name, mtimeMs: Number.NaN }
            : {
                name,
                mtimeMs: st.mtimeMs,
                ...(st.isFile() ? { seen: { size: st.size, mtimeMs: st.mtimeMs, since } } : {}),
              },
        );
      }
      batch = [];
    };
    const entered = new Set<string>();
    const pacer = new GarbagePacer(this.options.collectEveryEntries ?? SCAN_COLLECT_EVERY_ENTRIES, 'major');
    let whole = true;
    const list = async (folders: readonly string[]) => {
      const at = folders.join('/');
      const dir = path.join(this.dir, ...folders);
      const below: string[] = [];
      for await (const { entry, dirent } of readEntries(dir, 256)) {
        if (this.stopped) {
          whole = false;
          break;
        }
        pacer.passed(1);
        const relative = at === '' ? entry.name : `${at}/${entry.name}`;
        if (dirent.isDirectory()) {
          if (folders.length < this.depth && this.enters(relative, entry)) below.push(entry.name);
          continue;
        }
        if (entry.raw !== undefined) {
          await this.reject(relative, 'bad-name', entryPath(dir, entry));
          continue;
        }
        if (dirent.isSymbolicLink()) {
          await this.reject(relative, 'symlink');
          continue;
        }
        const name = this.candidateOf(relative);
        if (name === undefined || this.pending.has(name)) continue;
        if (this.pending.size === 0 && !this.toldByScan) {
          this.toldByScan = true;
          this.options.onWaiting?.();
        }
        batch.push(name);
        if (batch.length >= SCAN_STAT_BATCH) await offerBatch();
      }
      for (const name of below) {
        const sub = [...folders, name];
        const relative = sub.join('/');
        entered.add(relative);
        this.watcher?.add(relative);
        try {
          await list(sub);
        } catch (err) {
          // Removed meanwhile, or shut to the agent: the rest of the tree is still listed.
          whole = false;
          if (errnoOf(err) !== 'ENOENT') this.warnOnce(relative, 'sub-folder cannot be listed');
        }
      }
    };
    try {
      await list([]);
      await offerBatch();
    } catch (err) {
      whole = false;
      this.log.error({ folder: this.folderName, err }, 'folder scan failed');
    }
    if (whole && this.depth > 0) this.watcher?.keepOnly(entered);
    for (const { name, seen } of first.take()) this.notice(name, seen);
    this.toldByScan = false;
    if (first.leftOut) this.scanNeeded = true;
  }

  /**
   * Whether a recursive folder's scan enters this sub-folder: never a hidden one (`.processing`,
   * `.archive`), one of the agent's own, or one whose name is not a valid file name (a name is as
   * hostile as a file's: such a folder is said once and left alone). Links are never folders here.
   */
  private enters(relative: string, entry: EntryName): boolean {
    if (entry.name.startsWith('.') || this.ownDirs.has(relative)) return false;
    if (entry.raw !== undefined || nameFault(entry.name) !== undefined) {
      this.warnOnce(relative, 'sub-folder name is not a valid file name: not entered');
      return false;
    }
    return true;
  }

  /** For the scan's order: a file that cannot be stat'ed sorts last (its pass reports why). */
  private async statOf(name: string): Promise<Stats | undefined> {
    try {
      return await (this.options.lstat ?? lstatFile)(path.join(this.dir, name));
    } catch {
      return undefined;
    }
  }

  /** One pass of the stat loop. Overlapping calls share the pass in progress. */
  tick(): Promise<void> {
    this.ticking ??= this.runTick().finally(() => {
      this.ticking = undefined;
      if (this.pending.size === 0 && !this.scanNeeded) this.disarmStatLoop();
      else this.armStatLoop();
      this.armDueTimer();
    });
    return this.ticking;
  }

  /** A pass at the soonest time a skipped name is due, when the stat loop runs on its timers. */
  private armDueTimer(): void {
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    if (!this.looping || this.stopped || this.nextDue === Number.POSITIVE_INFINITY) return;
    const wait = Math.max(0, this.nextDue - this.options.clock.now());
    this.dueTimer = setTimeout(() => this.wake(), wait).unref();
  }

  private async runTick(): Promise<void> {
    this.nextDue = Number.POSITIVE_INFINITY;
    do {
      this.again = false;
      await this.pass();
    } while (this.again && !this.stopped);
  }

  private async pass(): Promise<void> {
    if (this.scanNeeded && this.pending.size < this.maxPending / 2) {
      await this.scan();
      this.again = false; // the names it noticed are in this pass
    }
    // A chunk of pending names at a time: its complete files are claimed in the folder's order
    // before the next chunk is looked at, so a pass that backpressure ends early has not stat'ed
    // every pending name (the pipeline resumes the source once per file it finishes).
    const names = [...this.pending.keys()];
    const { maxFilesPerScan } = this.options.folder;
    let claimsLeft = maxFilesPerScan ?? Number.POSITIVE_INFINITY;
    let lookedWhilePaused = 0;
    for (let at = 0; at < names.length; at += OBSERVE_CHUNK) {
      const complete: Complete[] = [];
      for (const name of names.slice(at, at + OBSERVE_CHUNK)) {
        if (this.stopped) return;
        if (this.notDueYet(name)) continue;
        if (this.paused) {
          // Looking while paused only moves settle times on: a file found complete needs no more
          // looks until the resume, another one a look per LOOK_GAP_MS.
          if (this.pending.get(name)?.complete !== undefined || this.lookedWithin(name, LOOK_GAP_MS))
            continue;
          if (++lookedWhilePaused > PAUSED_LOOKAHEAD) return;
        }
        try {
          const found = await this.step(name);
          if (found) complete.push(found);
        } catch (err) {
          this.log.error({ folder: this.folderName, file: name, err }, 'file observation failed');
        }
      }
      const keyOf = (c: Complete) => ({ name: c.name, mtimeMs: c.obs.mtimeMs });
      for (const { name, obs, entry, access } of pickForScan(complete, keyOf, this.options.folder)) {
        if (this.stopped || this.paused || claimsLeft <= 0) break;
        claimsLeft -= 1;
        try {
          await this.claimAndAccept(name, path.join(this.dir, name), obs, entry, access);
        } catch (err) {
          this.log.error({ folder: this.folderName, file: name, err }, 'file observation failed');
        }
      }
      if (claimsLeft <= 0) return;
    }
  }

  /** Seen by a scan and its settle time not up: a look now could only say "wait". */
  private notDueYet(name: string): boolean {
    const dueAt = this.pending.get(name)?.dueAt;
    if (dueAt === undefined) return false;
    if (this.options.clock.now() >= dueAt) return false;
    this.nextDue = Math.min(this.nextDue, dueAt);
    return true;
  }

  private lookedWithin(name: string, ms: number): boolean {
    const lookedAt = this.pending.get(name)?.lookedAt;
    return lookedAt !== undefined && this.options.clock.now() - lookedAt < ms;
  }

  /** Observes one pending name; a complete file to claim is returned, not claimed. */
  private async step(name: string): Promise<Complete | undefined> {
    const entry = this.pending.get(name);
    if (entry === undefined) return;
    const now = this.options.clock.now();
    if (entry.retryAt !== undefined && now < entry.retryAt) return;
    const { complete } = entry;
    if (complete !== undefined && now - complete.at < LOOK_GAP_MS && !this.paused && !this.stopped)
      return { name, obs: complete.obs, entry, access: complete.access };
    const { stability } = this.options.folder;
    let look: FileLook;
    try {
      look = await lookAt(this.dir, name, stability, this.options.probeReadable, this.options.lstat);
    } catch (err) {
      const errno = errnoOf(err);
      if (errno === undefined || !PERMISSION_ERRNOS.has(errno)) throw err;
      this.noteBlocked(name, { cannot: 'stat', errno }, now);
      return;
    }
    if (look.kind !== 'file') {
      this.pending.delete(name);
      this.unblock(name, 'gone');
      // A recursive folder's new sub-folder is entered by a scan; a removed one's watch dropped.
      if (look.kind === 'directory' && this.depth > 0 && !this.watcher?.has(name)) this.requestScan();
      if (look.kind === 'gone') this.watcher?.forget(name);
      if (look.kind === 'symlink' || look.kind === 'special') await this.reject(name, look.kind);
      return;
    }
    const { obs } = look;
    entry.lookedAt = now;
    delete entry.dueAt;
    const { state, verdict } = observe(entry.state, obs, now, stability);
    entry.state = state;
    if (verdict === 'stable') entry.complete = { obs, access: look.access, at: now };
    else delete entry.complete;
    if (verdict === 'unreadable') {
      this.noteBlocked(
        name,
        { cannot: 'read', errno: look.openError ?? 'unknown', access: look.access },
        now,
      );
      return;
    }
    // Changing again (the ERP rewrites it): the grace starts over once it is complete.
    if (verdict === 'wait' && this.blocked.get(name)?.reported === undefined) this.blocked.delete(name);
    if (verdict === 'stable' && !this.paused && !this.stopped)
      return { name, obs, entry, access: look.access };
    return undefined;
  }

  /**
   * A complete file the agent cannot read, stat or move: reported once (one warning, the gauge,
   * /readyz) when the state has lasted the grace (a move failure at once); it stays where it is.
   */
  private noteBlocked(
    name: string,
    cause: { cannot: UnreadableCause; errno: string; access?: FileAccess },
    now: number,
  ): void {
    let blocked = this.blocked.get(name);
    if (blocked === undefined || blocked.cannot !== cause.cannot) {
      blocked = { cannot: cause.cannot, since: now };
      this.blocked.set(name, blocked);
    }
    if (blocked.reported) return;
    if (cause.cannot !== 'move' && now - blocked.since < UNREADABLE_GRACE_MS) return;
    const file = describeUnreadable({
      folder: this.folderName,
      dir: this.dir,
      name,
      ...cause,
      dirGid: this.dirGid,
      since: blocked.since,
    });
    blocked.reported = file;
    const { folder, since: _since, name: _name, ...facts } = file;
    this.log.warn(
      { code: UNREADABLE_CODE, folder, file: name, ...facts, agent: agentAccount() },
      `file the agent cannot ${file.cannot}: it waits in the drop folder, untouched`,
    );
    this.options.onUnreadableChange?.();
  }

  /** A blocked file is taken now, or gone: said when it had been reported. */
  private unblock(name: string, why: 'taken' | 'gone'): void {
    const blocked = this.blocked.get(name);
    if (blocked === undefined) return;
    this.blocked.delete(name);
    if (!blocked.reported) return;
    this.log.info(
      { folder: this.folderName, file: name, cannot: blocked.cannot },
      why === 'taken'
        ? `file the agent could not ${blocked.cannot} is taken now`
        : `file the agent could not ${blocked.cannot} is gone from the drop folder`,
    );
    this.options.onUnreadableChange?.();
  }

  private async reject(
    name: string,
    kind: RejectedKind,
    at: string | Buffer = path.join(this.dir, name),
  ): Promise<void> {
    if (kind === 'symlink' && this.ownDirs.has(name)) {
      await this.ownDirLinked(name);
      return;
    }
    // In a recursive folder `name` is a relative path: the entry is placed under its sub-path.
    const split = splitRelative(name);
    const rejected: RejectedEntry = {
      name: split.name,
      ...(split.folders.length > 0 ? { subFolders: split.folders } : {}),
      path: at,
      ...REJECTIONS[kind](name),
    };
    if (!this.options.onRejected || this.paused || this.stopped) {
      this.warnOnce(name, IGNORED[kind]);
      return;
    }
    try {
      await this.options.onRejected(rejected);
    } catch (err) {
      if (isDocexError(err, FOLDER_UNSAFE_CODE)) this.options.onUnsafe?.(err);
      this.warnOnce(name, 'could not move a refused entry to the error folder');
      this.log.debug({ folder: this.folderName, file: name, err }, 'refusal failed');
    }
  }

  /** One of the agent's own folders swapped for a link: left where it is, and the folder stops. */
  private async ownDirLinked(name: string): Promise<void> {
    try {
      await assertRealDir(path.join(this.dir, name));
    } catch (err) {
      this.warnOnce(name, 'a folder the agent writes into is a symbolic link');
      if (isDocexError(err, FOLDER_UNSAFE_CODE)) this.options.onUnsafe?.(err);
    }
  }

  private async claimAndAccept(
    name: string,
    filePath: string,
    obs: Observation,
    entry: Pending,
    access: FileAccess,
  ): Promise<void> {
    const where = { folder: this.folderName, file: name };
    let result: Awaited<ReturnType<typeof claimFile>>;
    try {
      // A recursive folder's file keeps its sub-path in `.processing/` (recovery reads it back).
      const { folders } = splitRelative(name);
      result = await claimFile(filePath, this.processingDir, obs, this.options.rename, folders);
    } catch (err) {
      const now = this.options.clock.now();
      entry.retryAt = now + CLAIM_RETRY_MS;
      const errno = isDocexError(err, 'DOCEX_SOURCE_CLAIM_FAILED') ? err.details?.['errno'] : undefined;
      if (typeof errno === 'string' && PERMISSION_ERRNOS.has(errno)) {
        // Reported once; tried again every CLAIM_RETRY_MS without a line each time.
        this.noteBlocked(name, { cannot: 'move', errno, access }, now);
        this.log.debug({ ...where, err }, 'claim refused by permissions: tried again later');
        return;
      }
      if (fileInTheWay(err)) {
        // A claimed file of its sub-folder's name in flight: said once, tried again until it moved on.
        if (!this.inTheWay.has(name)) {
          if (this.inTheWay.size >= MAX_WARNED) this.inTheWay.clear();
          this.inTheWay.add(name);
          this.log.warn({ ...where, code: 'DOCEX_SOURCE_CLAIM_FAILED' }, FILE_IN_THE_WAY);
        }
        return;
      }
      this.log.error({ ...where, err, code: isDocexError(err) ? err.code : undefined }, 'claim failed');
      if (isDocexError(err, FOLDER_UNSAFE_CODE)) this.options.onUnsafe?.(err);
      return;
    }
    this.pending.delete(name);
    this.inTheWay.delete(name);
    this.unblock(name, result.outcome === 'lost' ? 'gone' : 'taken');
    if (result.outcome === 'lost') {
      this.log.info(where, 'file taken by another claimer');
      return;
    }
    if (result.outcome === 'changed') {
      if (await releaseClaim(result.claimedPath, filePath)) {
        await removeEmptiedClaimDirs(this.processingDir, result.claimedPath);
        this.pending.set(name, {});
        this.log.warn(where, 'file changed while claiming, put back');
        return;
      }
      // The name was reused meanwhile: the claimed copy stays in .processing for crash recovery.
      this.log.error({ ...where, code: 'DOCEX_SOURCE_CLAIM_CHANGED' }, 'file changed while claiming');
      return;
    }
    const file: ClaimedFile = {
      folder: this.folderName,
      name: splitRelative(name).name,
      originalPath: filePath,
      claimedPath: result.claimedPath,
      size: result.size,
      mtimeMs: result.mtimeMs,
    };
    if (obs.marker !== undefined) {
      const markerPath = result.claimedPath + obs.marker.name.slice(name.length);
      try {
        await fs.rename(path.join(this.dir, obs.marker.name), markerPath);
        file.markerPath = markerPath;
      } catch (err) {
        this.log.warn({ ...where, err }, 'marker not moved');
      }
    }
    this.log.info({ ...where, size: file.size }, 'file claimed');
    try {
      await this.options.accept(file);
    } catch (err) {
      // The file stays in .processing; recovery accepts it again at the next start.
      this.log.error({ ...where, err }, 'hand-off failed');
    }
  }

  private warnOnce(name: string, message: string): void {
    if (this.warned.has(name)) return;
    if (this.warned.size >= MAX_WARNED) this.warned.clear();
    this.warned.add(name);
    this.log.warn({ folder: this.folderName, file: name }, message);
  }
}
