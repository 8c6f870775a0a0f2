/**
 * The I/O shell of one SFTP drop folder. Each poll: finish, or download again, what `.processing/`
 * holds (source-reconcile.ts), then list the drop folder once, let the stability core pick the
 * complete files, claim each by renaming it into the remote `.processing/` (or, when the server
 * refuses RENAME, by the journal alone), download it into the local spool (a temp name in
 * `.incoming/`, size checked, stamped with the remote mtime, fsynced, renamed into `.processing/`)
 * and hand the spool copy to the pipeline like a local file. When the pipeline reports the item
 * final, the remote file goes to the remote archive (or is deleted) or the remote error folder.
 *
 * Several agents polling one server (a shared journal) each claim into a folder of their own,
 * `.processing/<claim folder>/`: the rename decides which agent took a file, and an agent's
 * reconciliation looks only at its own folder. The files in the folder of an agent that is gone
 * (no heartbeat: dead, frozen or stopped) are adopted, one rename each, by whichever agent renames
 * them first, and reconciled as its own: the journal's `same-drop` answer hands their items over.
 *
 * A recursive folder lists its sub-folders too (remote-tree.ts): a file is then known by its path
 * relative to the drop folder (`acme/invoices/x.pdf`), which it keeps everywhere the agent puts it:
 * `.processing/acme/invoices/` on the server and in the spool, the remote archive and error folders,
 * and the journal (`<url>/acme/invoices/x.pdf`, what routes match).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import PQueue from 'p-queue';
import { RECURSIVE_MAX_DEPTH } from '../../config/folder-schema.js';
import type { Clock } from '../../core/clock.js';
import { outcomeOf } from '../../core/error-codes.js';
import { DocexError, isDocexError } from '../../core/errors.js';
import { existsOrFalse } from '../../core/fs.js';
import type { Logger } from '../../core/logger.js';
import { assertRealPath, ensureRealDir, FOLDER_UNSAFE_CODE } from '../../core/real-dir.js';
import { relativeBelow, relativeSegments, subFolders } from '../../domain/relative-path.js';
import type { JournalItem } from '../../journal/index.js';
import type { RemoteEntry, SftpServer } from '../../sftp/types.js';
import { missingRemoteDropFolder } from '../drop-folder.js';
import { createNameFilter } from '../glob.js';
import {
  claimDirOf,
  FILE_IN_THE_WAY,
  fileInTheWay,
  PROCESSING_DIR,
  removeEmptiedClaimDirs,
  renameIntoClaimDir,
} from '../local/claim.js';
import { markerSuffixes, type StabilityRule } from '../local/stability.js';
import { pickForScan, type ScanOrderRule } from '../scan-order.js';
import { BAD_NAME_CODE, badNameFiles, badNameReason, mayBeUndecodable } from './bad-name.js';
import { removeEmptiedRemoteDirs, removeEmptyRemoteDirs } from './remote-cleanup.js';
import { RENAME_REFUSED, type RemoteSideFile, removeIfThere } from './remote-finalize.js';
import { REMOTE_PROCESSING_DIR, remoteJoin } from './remote-paths.js';
import { listRemoteTree, type RemoteTree, type SkippedFolder, splitRelative } from './remote-tree.js';
import { RemoteFinisher, type RemoteMarker } from './source-finish.js';
import { reconcile, sameRemoteFile } from './source-reconcile.js';
import { ListingTracker } from './stability.js';

/** `order` and `maxFilesPerScan`: which complete files each poll claims first, and how many. */
export interface SftpFolderSettings extends ScanOrderRule {
  name: string;
  /** `sftp://user@host:port/path`: the journal records each file as `<url>/<name>`. */
  url: string;
  remotePath: string;
  include: readonly string[];
  exclude: readonly string[];
  stability: StabilityRule;
  claim: 'rename' | 'journal';
  afterSuccess: 'archive' | 'delete';
  remoteArchiveDir: string;
  remoteErrorDir: string;
  /** Local folder whose `.processing/` receives the downloads. */
  spoolDir: string;
  /** 0: no timer (tests call `tick()`). */
  pollIntervalMs: number;
  /** Make the remote drop folder when it is missing (the folder's `create`); otherwise it is reported. */
  create?: boolean;
  /** The folder's key in the configuration (`folders[2]`), named when the drop folder is missing. */
  at?: string;
  /** Take files in sub-folders too, down to `depth` levels; absent: the drop folder itself only. */
  recursive?: { depth: number } | undefined;
}

/** What a spool copy is handed to the pipeline as (pipeline.accept's file). */
export interface SpoolFile {
  /** The file's own name; its sub-path, in a recursive folder, is read from `originalPath`. */
  name: string;
  originalPath: string;
  claimedPath: string;
}

/** Several agents on one journal polling one server: where each claims, and who is gone. */
export interface SharedClaims {
  /** This agent's claim folder in `.processing/` (the same across its restarts). */
  own: string;
  /** Whether the folder is another agent's claim folder (its name's pattern). */
  isClaimFolder(name: string): boolean;
  /** Whether no live agent claims into the folder `name`: its files may be adopted. */
  abandoned(name: string): Promise<boolean>;
}

export interface SftpSourceOptions {
  folder: SftpFolderSettings;
  server: SftpServer;
  journal: { byPath(path: string): Promise<JournalItem[]>; holds(fileId: number): boolean };
  /** Several agents share the journal (and so may poll this server): see SharedClaims. */
  shared?: SharedClaims;
  clock: Clock;
  log: Logger;
  /**
   * The pipeline's accept of a spool copy. `false`: not taken (unknown folder, stopping); `onLost`:
   * taken, then failed before it became an item. Either way the name stops counting as in flight.
   */
  accept(file: SpoolFile, onLost: (err: unknown) => void): boolean | undefined;
  /** Names that are not items of their own (payload-pdf sidecars): they travel with their data file. */
  isCompanion?(name: string): boolean;
  companionsOf?(name: string): string[];
  /** The reason files written beside a rejected file in the remote error folder. */
  errorFiles(item: JournalItem, now: number): RemoteSideFile[];
  /** Failed downloads of one file before it is rejected into the remote error folder. Default 5. */
  maxDownloadAttempts?: number;
  /** Downloads at the same time. Default 2. */
  transfers?: number;
  /** Files between their claim and their remote finish, at most (default 64). */
  maxInFlight?: number;
  /** The spool proved not a real directory (DOCEX_FOLDER_UNSAFE): the folder must stop. */
  onUnsafe?(err: DocexError): void;
}

interface InFlight {
  /** Where the remote file sits while the pipeline has it. */
  remoteFile: string;
  marker?: RemoteMarker;
}

const DOWNLOAD_FAILED = 'DOCEX_SFTP_DOWNLOAD_FAILED';
/** Times a claim (or adoption) makes its sub-folder of `.processing/` again when it went before the rename. */
const CLAIM_DIR_TRIES = 5;
/** Sub-folders said to be left alone, at most (a bound on memory, like the local source's warnings). */
const MAX_WARNED = 1_000;
const SKIPPED: Record<SkippedFolder, string> = {
  'bad-name': 'sub-folder name is not a valid file name: not entered',
  reserved: "sub-folder named like an agent's claim folder (agent-<16 hex digits>): not entered",
  unlistable: 'sub-folder cannot be listed',
};
/**
 * Whether a failed download counts towards rejecting the file. A failure whose outcome is
 * `unreachable` (the server could not be reached, logged into, or kept connected) says nothing of
 * the file: it is tried again when the server is back.
 */
export function countsAgainstFile(code: string): boolean {
  return outcomeOf(code) !== 'unreachable';
}
/** Files of one folder between their claim and their remote finish, at most. */
const MAX_IN_FLIGHT = 64;
/**
 * Downloads land here first (same file system as `.processing/`) and are renamed into
 * `.processing/` once complete: a download cut short by a kill never looks like a claimed file to
 * the pipeline's recovery. Emptied when the source starts.
 */
export const SPOOL_INCOMING_DIR = '.incoming';

export class SftpSource {
  private readonly tracker: ListingTracker;
  private readonly inFlight = new Map<string, InFlight>();
  private readonly finisher: RemoteFinisher;
  /** Downloads run beside the polls, a few at a time (the server's transfer pool). */
  private readonly transfers: PQueue;
  private readonly failures = new Map<string, number>();
  /** Listed names no request can reach (not UTF-8 on the server), reported once each. */
  private readonly badNames = new Set<string>();
  /** Sub-folders left alone, said once each. */
  private readonly warned = new Set<string>();
  /** Sub-folder levels listed below the drop folder (0: a flat folder). */
  private readonly depth: number;
  /** The agent's own folders inside the drop tree, relative to it: a recursive listing never enters them. */
  private readonly ownDirs: ReadonlySet<string>;
  private readonly abort = new AbortController();
  /** `.processing/`, and where this agent claims: the same, or its own folder in it (shared). */
  private readonly processingRoot: string;
  private readonly processingDir: string;
  private readonly spoolProcessing: string;
  private readonly spoolIncoming: string;
  /** Remote finishes under way: the connection is closed only after them. */
  private readonly finishing = new Set<Promise<void>>();
  private dirsReady = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private paused = false;
  private stopped = true;
  private lastProblem: string | undefined;

  constructor(private readonly options: SftpSourceOptions) {
    const { folder } = options;
    this.tracker = new ListingTracker(
      folder.stability,
      createNameFilter({ include: folder.include, exclude: folder.exclude }),
    );
    const processingRoot = remoteJoin(folder.remotePath, REMOTE_PROCESSING_DIR);
    this.processingRoot = processingRoot;
    this.processingDir = options.shared ? remoteJoin(processingRoot, options.shared.own) : processingRoot;
    this.spoolProcessing = path.join(folder.spoolDir, PROCESSING_DIR);
    this.spoolIncoming = path.join(folder.spoolDir, SPOOL_INCOMING_DIR);
    this.depth = folder.recursive?.depth ?? 0;
    this.ownDirs = ownDirsBelow(folder.remotePath, [folder.remoteArchiveDir, folder.remoteErrorDir]);
    this.finisher = new RemoteFinisher(
      {
        server: options.server,
        folder,
        clock: options.clock,
        log: options.log,
        logFields: (name, remotePath) => this.logFields(name, remotePath),
        errorFiles: options.errorFiles,
        ...(options.companionsOf ? { companionsOf: options.companionsOf } : {}),
        subFoldersOf: (item) => subFolders(this.nameOf(item)),
        left: (from) => this.leftProcessing(this.processingDir, from),
      },
      folder.claim === 'journal',
    );
    this.transfers = new PQueue({ concurrency: options.transfers ?? 2 });
  }

  /**
   * A file left `root` (this agent's claim folder or `.processing/`, or a gone agent's it was adopted
   * from): the sub-folders it left empty go (remote-cleanup.ts). Best effort: a folder that stays is
   * only untidy, and the next reconciliation tries again.
   */
  private async leftProcessing(root: string, from: string): Promise<void> {
    try {
      await removeEmptiedRemoteDirs(this.options.server, root, from);
    } catch (err) {
      this.log.debug({ ...this.logFields(undefined, from), err }, 'emptied claim folders not removed');
    }
  }

  /** The empty sub-folders of a listed tree of `.processing/` (a crash's leftovers); best effort. */
  private async sweepEmpty(root: string, tree: RemoteTree): Promise<void> {
    if (tree.folders.length === 0) return;
    try {
      await removeEmptyRemoteDirs(this.options.server, root, tree);
    } catch (err) {
      this.log.debug({ ...this.logFields(undefined, root), err }, 'empty claim folders not removed');
    }
  }

  /**
   * Renames `from` to `to`, making `to`'s folder first (a recursive folder's sub-path). The folder
   * may go between its MKDIR and the RENAME (emptied by a file that left it: leftProcessing): made
   * again, a few times, while `from` is still there. NOT_FOUND otherwise: `from` is gone.
   */
  private async renameInto(from: string, root: string, relative: string): Promise<void> {
    const { server } = this.options;
    const to = remoteJoin(root, relative);
    const dir = path.posix.dirname(to);
    const subPath = relative.includes('/');
    for (let attempt = 1; ; attempt++) {
      if (subPath) await this.claimDir(root, splitRelative(relative).folders);
      try {
        await server.rename(from, to);
        return;
      } catch (err) {
        if (!subPath || attempt >= CLAIM_DIR_TRIES || !isDocexError(err, 'DOCEX_SFTP_NOT_FOUND')) throw err;
        if ((await server.stat(dir)) !== undefined || (await server.stat(from)) === undefined) throw err;
      }
    }
  }

  /**
   * MKDIR -p of a claim's sub-folder below `root`. A file in the way (`acme` claimed from the top,
   * or from a server listing a file and a folder of one name, while `acme/x.pdf` waits) fails the
   * claim for now as a local claim does (DOCEX_SOURCE_CLAIM_FAILED, ENOTDIR: fileInTheWay).
   */
  private async claimDir(root: string, folders: readonly string[]): Promise<void> {
    const { server } = this.options;
    try {
      await server.mkdirp(remoteJoin(root, ...folders));
    } catch (err) {
      for (let depth = 1; depth <= folders.length; depth++) {
        const level = folders.slice(0, depth);
        if ((await server.stat(remoteJoin(root, ...level)))?.type !== 'file') continue;
        throw new DocexError('DOCEX_SOURCE_CLAIM_FAILED', 'a claimed file stands where its sub-folder goes', {
          cause: err,
          details: { file: level.join('/'), errno: 'ENOTDIR' },
        });
      }
      throw err;
    }
  }

  private get log(): Logger {
    return this.options.log;
  }

  /** Log fields of a file; the logger given is the folder's child and carries `folder` already. */
  private logFields(name?: string, remotePath?: string): Record<string, unknown> {
    return {
      server: this.options.server.description,
      ...(name === undefined ? {} : { file: name }),
      ...(remotePath === undefined ? {} : { remotePath }),
    };
  }

  /** The journal's source path of a remote drop-folder file (`relative`: its path below the folder). */
  sourceUrl(relative: string): string {
    return `${this.options.folder.url}/${relative}`;
  }

  /** The spool copy of a file (`relative`: its path below the drop folder, kept in `.processing/`). */
  private spoolPath(relative: string): string {
    return path.join(this.spoolProcessing, ...relative.split('/'));
  }

  /** A file's companions (sidecars) as paths below the drop folder: beside it, in its sub-folder. */
  private companionsOf(relative: string): string[] {
    const { folders, name } = splitRelative(relative);
    return (this.options.companionsOf?.(name) ?? []).map((c) => [...folders, c].join('/'));
  }

  private isCompanion(relative: string): boolean {
    return this.options.isCompanion?.(splitRelative(relative).name) ?? false;
  }

  /** The drop folder's tree, down to the folder's depth. */
  private listDropTree(
    skipped: (relative: string, why: SkippedFolder, cause?: unknown) => void,
  ): Promise<RemoteTree> {
    return this.listTree(this.options.folder.remotePath, this.depth, skipped);
  }

  /**
   * A tree of `.processing/` (this agent's claims, the loose ones, a gone agent's), down to the
   * deepest any folder may go, whatever this folder's depth: a file claimed under a sub-path before
   * its depth was lowered or its recursion turned off (or by a recursive agent that is gone) is still
   * reconciled or adopted.
   */
  private listClaimedTree(root: string): Promise<RemoteTree> {
    return this.listTree(root, RECURSIVE_MAX_DEPTH);
  }

  private listTree(
    root: string,
    depth: number,
    skipped?: (relative: string, why: SkippedFolder, cause?: unknown) => void,
  ): Promise<RemoteTree> {
    const { server } = this.options;
    return listRemoteTree(root, {
      list: (dir) => server.list(dir),
      reachable: async (p) => (await server.stat(p)) !== undefined,
      depth,
      ownDirs: this.ownDirs,
      // Sub-folders named like claim folders would be mistaken for another agent's in `.processing/`.
      skipClaimFolders: true,
      ...(skipped ? { onSkipped: skipped } : {}),
    });
  }

  async start(): Promise<void> {
    this.stopped = false;
    await ensureRealDir(this.spoolProcessing);
    // Partial downloads of a run that was killed: taken again from the server.
    await fs.rm(this.spoolIncoming, { recursive: true, force: true });
    await ensureRealDir(this.spoolIncoming);
    this.log.info(
      { ...this.logFields(), remotePath: this.options.folder.remotePath },
      'sftp folder source started',
    );
    // The first pass starts now but is not awaited: a slow or down server must not hold up the
    // agent's start (it is logged, and the next polls retry).
    void this.tick();
    const every = this.options.folder.pollIntervalMs;
    if (every > 0) this.timer = setInterval(() => void this.tick(), every).unref();
  }

  /**
   * Stops intake: no polls, downloads aborted. Items already handed to the pipeline still get
   * their remote finish through `finished()` (the connection stays open until the caller closes it).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.abort.abort();
    this.transfers.clear();
    await this.ticking;
    await this.transfers.onIdle();
  }

  /** Resolves once no remote finish is under way (before the connection is closed). */
  async settled(): Promise<void> {
    while (this.finishing.size > 0) await Promise.allSettled([...this.finishing]);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** One poll. Overlapping calls share the pass in progress. */
  tick(): Promise<void> {
    this.ticking ??= this.runTick().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async runTick(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.dirsReady) {
        await this.dropFolderThere();
        if (this.options.folder.claim === 'rename') await this.options.server.mkdirp(this.processingDir);
        this.dirsReady = true;
      }
      const claimed = this.options.folder.claim === 'rename' ? await this.reconcileProcessing() : [];
      await this.pollDropFolder(claimed);
      if (this.lastProblem !== undefined) this.log.info(this.logFields(), 'sftp folder reachable again');
      this.lastProblem = undefined;
    } catch (err) {
      // Unreachable server, refused host key, folder gone: said once per kind, retried each poll.
      // While the transport backs off it answers DOCEX_SFTP_CONNECT carrying the first failure's code.
      const cause = isDocexError(err) ? err.details?.code : undefined;
      const code = typeof cause === 'string' ? cause : isDocexError(err) ? err.code : 'DOCEX_SFTP_CONNECT';
      if (code !== this.lastProblem) this.log.error({ ...this.logFields(), code, err }, 'sftp poll failed');
      this.lastProblem = code;
    }
  }

  /**
   * The remote drop folder is the operator's: a missing one is made only when the folder says
   * `create: true`, else each poll fails with DOCEX_SOURCE_FOLDER_MISSING (logged once, like an
   * unreachable server) until it is there. A mistyped path never becomes a folder on the server.
   */
  private async dropFolderThere(): Promise<void> {
    const { server, folder } = this.options;
    if ((await server.stat(folder.remotePath)) !== undefined) return;
    if (folder.create) {
      await server.mkdirp(folder.remotePath);
      this.log.info({ ...this.logFields(), created: [folder.remotePath] }, 'folders created');
      return;
    }
    throw missingRemoteDropFolder(folder, folder.remotePath, server.description, folder.at);
  }

  /** `.processing/` after a crash (or a download that broke): see source-reconcile.ts. */
  private async reconcileProcessing(): Promise<string[]> {
    if (this.options.shared) await this.adoptAbandoned(this.options.shared);
    // A recursive folder's claims keep their sub-path: `.processing/acme/invoices/x.pdf`.
    const tree = await this.listClaimedTree(this.processingDir);
    const { entries } = tree;
    // Sub-folders a crash left empty (their last file moved, the folder not yet removed).
    await this.sweepEmpty(this.processingDir, tree);
    const listed = entries.map((e) => e.name);
    const suffixes = markerSuffixes(this.options.folder.stability);
    const companions: RemoteEntry[] = [];
    for (const entry of entries) {
      if (this.stopped) return listed;
      const { name } = entry;
      if (entry.type !== 'file' || this.inFlight.has(name) || this.finisher.busy(name)) continue;
      if (this.isCompanion(name)) companions.push(entry);
      if (this.isCompanion(name) || suffixes.some((s) => name.endsWith(s))) continue;
      const remoteFile = remoteJoin(this.processingDir, name);
      const decision = reconcile(
        entry,
        await this.newestItem(name),
        await this.hasLocalCopy(name),
        this.holds,
      );
      if (decision.action === 'finish') {
        await this.finisher.exclusive(name, () => this.finisher.finishItem(decision.item, remoteFile));
      } else if (decision.action === 'download') {
        this.log.info(this.logFields(name, remoteFile), 'taking a claimed file again');
        this.download(entry, remoteFile, undefined);
      } else if (decision.action === 'offer') {
        this.offer(name, remoteFile, undefined);
      }
    }
    await this.fetchCompanionsAgain(companions, listed);
    return listed;
  }

  private readonly holds = (item: JournalItem): boolean => this.options.journal.holds(item.id);

  /**
   * The files in the claim folders of agents that are gone, each renamed into this agent's folder
   * (another agent renaming it first wins: the file is gone here). The folder itself stays: an
   * agent coming back at the same place claims into it again.
   */
  private async adoptAbandoned(shared: SharedClaims): Promise<void> {
    // Files claimed straight into `.processing/` (by an agent alone on its journal, before this
    // one shared it), in their sub-folders too: nobody else reconciles them.
    const looseTree = await this.listClaimedTree(this.processingRoot);
    const loose = looseTree.entries;
    if (loose.length > 0) await this.adopt(this.processingRoot, loose, '.processing/');
    await this.sweepEmpty(this.processingRoot, looseTree);
    for (const dir of await this.options.server.list(this.processingRoot)) {
      if (this.stopped) return;
      if (dir.type !== 'dir' || dir.name === shared.own || !shared.isClaimFolder(dir.name)) continue;
      if (!(await shared.abandoned(dir.name))) continue;
      const from = remoteJoin(this.processingRoot, dir.name);
      const tree = await this.listClaimedTree(from);
      await this.adopt(from, tree.entries, dir.name);
      await this.sweepEmpty(from, tree);
    }
  }

  /** The files of `entries` (below `from`), each renamed into this agent's claim folder, sub-path kept. */
  private async adopt(from: string, entries: readonly RemoteEntry[], fromName: string): Promise<void> {
    const { server } = this.options;
    for (const entry of entries) {
      if (this.stopped) return;
      if (entry.type !== 'file') continue;
      const target = remoteJoin(this.processingDir, entry.name);
      // One file per name here: a leftover of the same name is finished first.
      if ((await server.stat(target)) !== undefined) continue;
      const source = remoteJoin(from, entry.name);
      try {
        await this.renameInto(source, this.processingDir, entry.name);
      } catch (err) {
        if (isDocexError(err, 'DOCEX_SFTP_NOT_FOUND')) continue;
        throw err;
      }
      await this.leftProcessing(from, source);
      this.log.info(
        { ...this.logFields(entry.name, target), from: fromName },
        'file adopted from an agent that is gone',
      );
    }
  }

  /** The spool copy handed to the pipeline again (its item may be taken over with it). */
  private offer(name: string, remoteFile: string, marker: InFlight['marker']): void {
    this.inFlight.set(name, { remoteFile, ...(marker ? { marker } : {}) });
    this.acceptCopy(name);
  }

  /** The spool copy of `name` to the pipeline; the name stays in flight until it is final or lost. */
  private acceptCopy(name: string): void {
    const file = {
      name: splitRelative(name).name,
      originalPath: this.sourceUrl(name),
      claimedPath: this.spoolPath(name),
    };
    const taken = this.options.accept(file, (err) => this.lost(name, err));
    if (taken === false) this.lost(name, undefined);
  }

  /**
   * A sidecar whose download broke after its claim sits in `.processing/` with no local copy, and
   * its PDF would wait for it for ever: fetched again while its PDF is claimed (here or in flight).
   */
  private async fetchCompanionsAgain(companions: RemoteEntry[], listed: string[]): Promise<void> {
    if (companions.length === 0) return;
    const wanted = new Set<string>();
    for (const name of [...listed, ...this.inFlight.keys()]) {
      if (this.isCompanion(name)) continue;
      for (const companion of this.companionsOf(name)) wanted.add(companion);
    }
    for (const entry of companions) {
      if (this.stopped) return;
      const { name } = entry;
      if (!wanted.has(name) || this.inFlight.has(name) || this.finisher.busy(name)) continue;
      if (await this.hasLocalCopy(name)) continue;
      const remoteFile = remoteJoin(this.processingDir, name);
      this.log.info(this.logFields(name, remoteFile), 'taking a claimed sidecar again');
      this.download(entry, remoteFile, undefined);
    }
  }

  /** `claimed`: the names the remote `.processing/` listed in this pass. */
  private async pollDropFolder(claimed: readonly string[]): Promise<void> {
    const { folder } = this.options;
    const { entries, seen } = await this.listDropTree((relative, why, cause) =>
      this.warnOnce(relative, SKIPPED[why], cause),
    );
    this.forgetVanished(seen, claimed);
    const verdict = this.tracker.feed(entries, this.options.clock.now());
    const max = this.options.maxInFlight ?? MAX_IN_FLIGHT;
    // Every complete file listed and sorted first (scan-order.ts), then at most maxFilesPerScan claimed.
    const { order, maxFilesPerScan } = folder;
    let claims = 0;
    for (const { entry, marker } of pickForScan(verdict.ready, ({ entry }) => entry, { order })) {
      if (maxFilesPerScan !== undefined && claims >= maxFilesPerScan) return;
      // Claim ahead of the pipeline only so far: the rest stays on the server for the next polls.
      if (this.stopped || this.paused || this.inFlight.size >= max) return;
      if (this.inFlight.has(entry.name) || this.finisher.busy(entry.name)) continue;
      if (mayBeUndecodable(entry.name) && (await this.unreachable(entry.name))) continue;
      const markerInfo = marker && {
        path: remoteJoin(folder.remotePath, marker.name),
        suffix: marker.name.slice(entry.name.length),
      };
      claims++;
      try {
        await this.claim(entry, markerInfo);
      } catch (err) {
        this.tracker.forget(entry.name);
        if (fileInTheWay(err)) {
          this.warnOnce(entry.name, FILE_IN_THE_WAY);
          continue;
        }
        const code = isDocexError(err) ? err.code : undefined;
        this.log.error({ ...this.logFields(entry.name), code, err }, 'sftp claim failed');
      }
    }
  }

  /** Failed-download counts and bad names no longer on the server are dropped (a new file may reuse the name). */
  private forgetVanished(seen: readonly string[], claimed: readonly string[]): void {
    if (this.failures.size === 0 && this.badNames.size === 0 && this.warned.size === 0) return;
    const present = new Set([...claimed, ...seen]);
    for (const name of this.warned) if (!present.has(name)) this.warned.delete(name);
    for (const name of this.failures.keys()) if (!present.has(name)) this.failures.delete(name);
    for (const name of this.badNames) if (!present.has(name)) this.badNames.delete(name);
  }

  private warnOnce(relative: string, message: string, cause?: unknown): void {
    if (this.warned.has(relative)) return;
    if (this.warned.size >= MAX_WARNED) this.warned.clear();
    this.warned.add(relative);
    const fields =
      cause === undefined ? {} : { code: isDocexError(cause) ? cause.code : undefined, err: cause };
    this.log.warn({ ...this.logFields(relative), ...fields }, message);
  }

  /**
   * A listed name with U+FFFD that a stat cannot find is not UTF-8 on the server (bad-name.ts):
   * said once, with reason files in the remote error folder (under its sub-path), and left alone.
   */
  private async unreachable(relative: string): Promise<boolean> {
    if (this.badNames.has(relative)) return true;
    const { server, folder, clock } = this.options;
    const original = remoteJoin(folder.remotePath, relative);
    if ((await server.stat(original)) !== undefined) return false;
    this.badNames.add(relative);
    const { folders, name } = splitRelative(relative);
    const where = remoteJoin(folder.remotePath, ...folders);
    this.log.error(
      { ...this.logFields(relative, original), code: BAD_NAME_CODE },
      `file not taken: ${badNameReason(where)}`,
    );
    try {
      const errorDir = remoteJoin(folder.remoteErrorDir, ...folders);
      await server.mkdirp(errorDir);
      for (const side of badNameFiles(name, folder.name, where, clock.now())) {
        const target = remoteJoin(errorDir, `${name}${side.suffix}`);
        // Those of an earlier run: renames never replace a file.
        await removeIfThere(server, target);
        await server.uploadAtomic(side.content, target);
      }
    } catch (err) {
      this.log.warn(
        { ...this.logFields(relative), err },
        'reason files for a name that is not UTF-8 not written',
      );
    }
    return true;
  }

  private async claim(entry: RemoteEntry, marker: InFlight['marker']): Promise<void> {
    const { server, folder } = this.options;
    const original = remoteJoin(folder.remotePath, entry.name);
    if (this.finisher.renameRefused) return this.claimInPlace(entry, original, marker);
    const claimed = remoteJoin(this.processingDir, entry.name);
    // One file per name in flight: a leftover of the same name is finished by reconciliation first.
    if ((await server.stat(claimed)) !== undefined || (await this.hasLocalCopy(entry.name))) return;
    try {
      // A recursive folder's file keeps its sub-path in `.processing/` (reconciliation reads it back).
      await this.renameInto(original, this.processingDir, entry.name);
    } catch (err) {
      if (isDocexError(err, 'DOCEX_SFTP_NOT_FOUND')) {
        // Gone between the listing and the rename: another agent (or the ERP) took it.
        this.tracker.forget(entry.name);
        this.log.info(this.logFields(entry.name, original), 'file taken by another claimer');
        return;
      }
      if (!isDocexError(err, RENAME_REFUSED)) throw err;
      this.finisher.renameRefused = true;
      this.log.warn(
        { ...this.logFields(entry.name, original), code: RENAME_REFUSED },
        'the server refuses rename: claiming by the journal only (files stay in place until final, then are removed)',
      );
      return this.claimInPlace(entry, original, marker);
    }
    this.tracker.forget(entry.name);
    const after = await server.stat(claimed);
    if (after === undefined || after.size !== entry.size || after.mtimeMs !== entry.mtimeMs) {
      // Still being written after all: put it back (when the name is free) and observe it again.
      if (after !== undefined && (await server.stat(original)) === undefined) {
        await server.rename(claimed, original);
        await this.leftProcessing(this.processingDir, claimed);
      }
      this.log.warn(this.logFields(entry.name, original), 'file changed while claiming, put back');
      return;
    }
    let claimedMarker: InFlight['marker'];
    if (marker) {
      claimedMarker = { path: `${claimed}${marker.suffix}`, suffix: marker.suffix };
      await server.rename(marker.path, claimedMarker.path).catch((err) => {
        claimedMarker = undefined;
        this.log.warn({ ...this.logFields(entry.name, marker.path), err }, 'marker not moved');
      });
    }
    this.log.info({ ...this.logFields(entry.name, claimed), size: entry.size }, 'file claimed');
    // Known by its path below the drop folder (a stat names the file alone).
    this.download({ ...after, name: entry.name }, claimed, claimedMarker);
  }

  /** Journal-only claim: the file stays where the ERP put it; the journal says whether it was claimed. */
  private async claimInPlace(
    entry: RemoteEntry,
    original: string,
    marker: InFlight['marker'],
  ): Promise<void> {
    const decision = reconcile(
      entry,
      await this.newestItem(entry.name),
      await this.hasLocalCopy(entry.name),
      this.holds,
    );
    if (decision.action === 'finish')
      await this.finisher.exclusive(entry.name, () => this.finisher.finishItem(decision.item, original));
    else if (decision.action === 'download') this.download(entry, original, marker);
    else if (decision.action === 'offer') this.offer(entry.name, original, marker);
  }

  /**
   * Queues remote → spool `.processing/<name>` (stamped with the remote mtime), then its accept by
   * the pipeline. The name counts as in flight from now on, so later polls leave it alone.
   */
  private download(entry: RemoteEntry, remoteFile: string, marker: InFlight['marker']): void {
    this.inFlight.set(entry.name, { remoteFile, ...(marker ? { marker } : {}) });
    void this.transfers.add(async () => {
      try {
        await this.fetch(entry, remoteFile);
      } catch (err) {
        this.log.error({ ...this.logFields(entry.name, remoteFile), err }, 'download step failed');
      }
    });
  }

  private async fetch(entry: RemoteEntry, remoteFile: string): Promise<void> {
    const { name } = entry;
    if (this.stopped) {
      this.inFlight.delete(name);
      return;
    }
    try {
      // Swapped for a link while running, the spool would carry the download elsewhere.
      await assertRealPath(this.options.folder.spoolDir, this.spoolProcessing);
      await assertRealPath(this.options.folder.spoolDir, this.spoolIncoming);
      // A recursive folder's copy keeps its sub-path, each level a real directory.
      await claimDirOf(this.spoolProcessing, splitRelative(name).folders);
    } catch (err) {
      this.inFlight.delete(name);
      this.tracker.forget(name);
      // A spool copy of the name of one of its sub-folders still in flight: taken once it moved on.
      if (fileInTheWay(err)) return this.warnOnce(name, FILE_IN_THE_WAY);
      this.log.error({ ...this.logFields(name, remoteFile), err }, 'spool refused');
      if (isDocexError(err, FOLDER_UNSAFE_CODE)) this.options.onUnsafe?.(err);
      return;
    }
    // Downloaded whole into `.incoming/` first, then renamed into its sub-folder of `.processing/`,
    // which a copy that left it may have just removed (made again: renameIntoClaimDir).
    const staged = path.join(this.spoolIncoming, `${randomBytes(8).toString('hex')}.ready`);
    try {
      // The journal records size and mtime of the claimed copy: stamped with the remote mtime before
      // the copy appears in `.processing/`, so a crash right after still matches the remote file.
      await this.options.server.download(remoteFile, staged, entry.size, this.abort.signal, {
        tempDir: this.spoolIncoming,
        mtimeMs: entry.mtimeMs,
      });
      const { folders, name: own } = splitRelative(name);
      await renameIntoClaimDir(this.spoolProcessing, folders, staged, own);
    } catch (err) {
      this.inFlight.delete(name);
      await fs.rm(staged, { force: true });
      if (this.stopped) return;
      if (fileInTheWay(err)) {
        this.tracker.forget(name);
        return this.warnOnce(name, FILE_IN_THE_WAY);
      }
      await this.downloadFailed(entry, remoteFile, err);
      return;
    }
    this.failures.delete(name);
    this.log.info({ ...this.logFields(name, remoteFile), size: entry.size }, 'file downloaded');
    this.acceptCopy(name);
  }

  /**
   * The pipeline did not take the spool copy (or failed before it became an item): the name no
   * longer counts as in flight. The copy stays in the spool's `.processing/`, where reconciliation
   * leaves it and the pipeline's recovery takes it at the next start.
   */
  private lost(name: string, err: unknown): void {
    if (!this.inFlight.delete(name)) return;
    this.log.warn({ ...this.logFields(name), err }, 'downloaded file not taken by the pipeline');
  }

  private async downloadFailed(entry: RemoteEntry, remoteFile: string, err: unknown): Promise<void> {
    const code = isDocexError(err) ? err.code : DOWNLOAD_FAILED;
    this.tracker.forget(entry.name);
    if (code === 'DOCEX_SFTP_NOT_FOUND') {
      // Nothing to reject: another agent adopted it (several agents), or someone removed it.
      this.log.info({ ...this.logFields(entry.name, remoteFile), code }, 'file gone before its download');
      return;
    }
    if (!countsAgainstFile(code)) {
      this.log.warn(
        { ...this.logFields(entry.name, remoteFile), code, err, counted: false },
        'download failed',
      );
      return;
    }
    const n = (this.failures.get(entry.name) ?? 0) + 1;
    const max = this.options.maxDownloadAttempts ?? 5;
    this.log.warn(
      { ...this.logFields(entry.name, remoteFile), code, err, try: n, of: max },
      'download failed',
    );
    if (n < max) {
      this.failures.set(entry.name, n);
      return;
    }
    // Never readable (permission denied, a file the server cannot serve): reject it remotely, once.
    this.failures.delete(entry.name);
    const reason = `the file could not be downloaded after ${n} tries (${code}: ${err instanceof Error ? err.message : String(err)})`;
    const folder = this.options.folder.name;
    const { folders, name } = splitRelative(entry.name);
    const record = {
      status: 'rejected',
      file: entry.name,
      folder,
      code: DOWNLOAD_FAILED,
      reason,
      size: entry.size,
      rejectedAt: new Date(this.options.clock.now()).toISOString(),
    };
    const text = `${entry.name} was not sent.\n\nReason: ${reason}\nCode:   ${DOWNLOAD_FAILED}\nFolder: ${folder}\n\nFix the file (or its permissions) and drop it again.\n`;
    await this.finisher.exclusive(entry.name, () =>
      this.finisher.reject(name, folders, remoteFile, [
        { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
        { suffix: '.error.txt', content: text },
      ]),
    );
    this.log.error(
      { ...this.logFields(entry.name, remoteFile), code: DOWNLOAD_FAILED, reason },
      'file refused',
    );
  }

  /**
   * Called by the pipeline (through the agent) when it left an item of this folder to another agent
   * (several agents on one journal): the name is no longer in flight here, and this agent's copy
   * goes. Should the remote file come back to this agent's claim folder (adopted again), the next
   * poll takes it like any adopted file.
   */
  async left(item: JournalItem): Promise<void> {
    const name = this.nameOf(item);
    if (name === undefined || !this.inFlight.delete(name)) return;
    await fs.rm(this.spoolPath(name), { force: true });
    await removeEmptiedClaimDirs(this.spoolProcessing, this.spoolPath(name));
    this.log.info(this.logFields(name), 'file left to another agent: this copy removed');
  }

  /**
   * The path below the drop folder of an item of this folder (`x.pdf`, `acme/x.pdf` in a recursive
   * one); undefined when it is not one of its files, or its path is not one the agent takes. A file
   * whose own name the pipeline refuses (a format character) is one of its files all the same: its
   * remote file goes to the error folder, under its sub-path, and its name stops counting as in flight.
   */
  private nameOf(item: JournalItem): string | undefined {
    const prefix = this.sourceUrl('');
    const name = item.sourcePath?.startsWith(prefix) ? item.sourcePath.slice(prefix.length) : '';
    const ours = item.kind === 'file' && item.folder === this.options.folder.name;
    return ours && relativeSegments(name) !== undefined ? name : undefined;
  }

  /** Called by the pipeline (through the agent) when an item of this folder became done or rejected. */
  finished(item: JournalItem): Promise<void> {
    const done = this.finishRemote(item);
    this.finishing.add(done);
    return done.finally(() => this.finishing.delete(done));
  }

  private async finishRemote(item: JournalItem): Promise<void> {
    const name = this.nameOf(item);
    if (name === undefined) return;
    const flight = this.inFlight.get(name);
    try {
      await this.finisher.exclusive(name, async () => {
        const remoteFile = flight?.remoteFile ?? (await this.locate(item, name));
        if (remoteFile !== undefined) await this.finisher.finishItem(item, remoteFile, flight?.marker);
      });
      // A sidecar travelled with its data file.
      for (const c of this.companionsOf(name)) this.inFlight.delete(c);
    } catch (err) {
      // Left where it is: the next poll's reconciliation finishes it.
      this.log.warn(
        { ...this.logFields(name, flight?.remoteFile), err },
        'remote finish failed, retried at the next poll',
      );
    } finally {
      this.inFlight.delete(name);
    }
  }

  /** After a restart the item's remote file is in `.processing/` (rename) or still in place (journal). */
  private async locate(item: JournalItem, name: string): Promise<string | undefined> {
    for (const dir of [this.processingDir, this.options.folder.remotePath]) {
      const candidate = remoteJoin(dir, name);
      const st = await this.options.server.stat(candidate);
      if (st && sameRemoteFile(item, st)) return candidate;
    }
    return undefined;
  }

  private async hasLocalCopy(name: string): Promise<boolean> {
    return existsOrFalse(this.spoolPath(name));
  }

  private async newestItem(name: string): Promise<JournalItem | undefined> {
    return (await this.options.journal.byPath(this.sourceUrl(name)))[0];
  }
}

/** The folders of `dirs` that lie inside the drop folder, as paths relative to it (`archive`). */
function ownDirsBelow(remotePath: string, dirs: readonly string[]): Set<string> {
  const root = path.posix.normalize(remotePath).replace(/\/+$/, '');
  const below = new Set<string>();
  for (const dir of dirs) {
    const relative = relativeBelow(root, path.posix.normalize(dir).replace(/\/+$/, ''), '/');
    if (relative !== undefined) below.add(relative);
  }
  return below;
}
