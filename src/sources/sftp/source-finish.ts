/**
 * The remote end of an SFTP folder's files: once an item is final, its remote file (and its marker
 * and sidecar) goes to the remote archive, is deleted, or goes to the remote error folder with the
 * reason files. One finish per name at a time: the pipeline's notice and a poll's reconciliation
 * may both see the same final item, and only the first acts.
 */
import path from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { JournalItem } from '../../journal/index.js';
import type { StabilityRule } from '../local/stability.js';
import { markerSuffixes } from '../local/stability.js';
import {
  finishRemote,
  RENAME_REFUSED,
  type RemoteMove,
  type RemoteOps,
  type RemoteOutcome,
  type RemoteSideFile,
} from './remote-finalize.js';
import { dayFolder, remoteJoin } from './remote-paths.js';
import { sameRemoteFile } from './source-reconcile.js';

export interface RemoteMarker {
  path: string;
  suffix: string;
}

export interface RemoteFinisherOptions {
  server: RemoteOps;
  folder: {
    stability: StabilityRule;
    afterSuccess: 'archive' | 'delete';
    remoteArchiveDir: string;
    remoteErrorDir: string;
  };
  clock: Clock;
  log: Logger;
  /** Log fields of a file: folder, server, file, remotePath. */
  logFields(name?: string, remotePath?: string): Record<string, unknown>;
  errorFiles(item: JournalItem, now: number): RemoteSideFile[];
  companionsOf?(name: string): string[];
  /** The sub-folders of a recursive folder the item was dropped in: its remote archive and error places keep them. */
  subFoldersOf(item: JournalItem): readonly string[];
  /** The data file left `from` (moved or removed): the folders it leaves empty may go. */
  left?(from: string): Promise<void>;
}

export class RemoteFinisher {
  private readonly finishing = new Set<string>();

  /** The server refuses RENAME: claims are journal-only and finished files are removed. */
  renameRefused: boolean;

  constructor(
    private readonly options: RemoteFinisherOptions,
    renameRefused: boolean,
  ) {
    this.renameRefused = renameRefused;
  }

  busy(name: string): boolean {
    return this.finishing.has(name);
  }

  /** Runs `fn` unless the same name is being finished already (then does nothing). */
  async exclusive(name: string, fn: () => Promise<void>): Promise<void> {
    if (this.finishing.has(name)) return;
    this.finishing.add(name);
    try {
      await fn();
    } finally {
      this.finishing.delete(name);
    }
  }

  /**
   * Moves the remote file of a final item. Only the very file the item recorded: gone means it was
   * moved already; another one under that name (a new drop, journal-only claim) is left alone.
   */
  async finishItem(item: JournalItem, remoteFile: string, marker?: RemoteMarker): Promise<void> {
    const { server, folder, clock } = this.options;
    const current = await server.stat(remoteFile);
    if (current === undefined || !sameRemoteFile(item, current)) return;
    const now = clock.now();
    // A recursive folder's file keeps its sub-path: `<archive>/acme/invoices/<day>/`, `<error>/acme/invoices/`.
    const sub = this.options.subFoldersOf(item);
    const outcome: RemoteOutcome =
      item.state === 'rejected'
        ? {
            kind: 'error',
            dir: remoteJoin(folder.remoteErrorDir, ...sub),
            sideFiles: this.options.errorFiles(item, now),
          }
        : folder.afterSuccess === 'delete'
          ? { kind: 'delete' }
          : { kind: 'archive', dir: remoteJoin(folder.remoteArchiveDir, ...sub, dayFolder(now)) };
    const dir = path.posix.dirname(remoteFile);
    const markers = marker
      ? [marker]
      : markerSuffixes(folder.stability).map((suffix) => ({ path: `${remoteFile}${suffix}`, suffix }));
    const companions = (this.options.companionsOf?.(item.fileName) ?? []).map((c) => remoteJoin(dir, c));
    await this.move(item.fileName, { from: remoteFile, name: item.fileName, markers, companions }, outcome);
  }

  /**
   * A file that never became an item (it could not be downloaded): to the error folder, under the
   * sub-folders it was dropped in, with its reason files.
   */
  async reject(
    name: string,
    subFolders: readonly string[],
    remoteFile: string,
    sideFiles: readonly RemoteSideFile[],
  ): Promise<void> {
    await this.move(
      name,
      { from: remoteFile, name },
      { kind: 'error', dir: remoteJoin(this.options.folder.remoteErrorDir, ...subFolders), sideFiles },
    );
  }

  private async move(name: string, move: RemoteMove, outcome: RemoteOutcome): Promise<void> {
    const result = await finishRemote(this.options.server, move, outcome, this.renameRefused);
    await this.options.left?.(move.from);
    if (result.renameRefused && !this.renameRefused) {
      this.renameRefused = true;
      this.options.log.warn(
        { ...this.options.logFields(name, move.from), code: RENAME_REFUSED },
        'the server refuses rename: files are removed once final',
      );
    }
    const message =
      outcome.kind === 'error'
        ? 'remote file refused'
        : result.placed === undefined
          ? 'remote file removed'
          : 'remote file archived';
    this.options.log.info({ ...this.options.logFields(name, move.from), placed: result.placed }, message);
  }
}
