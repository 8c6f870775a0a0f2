/**
 * An output folder on an SFTP server: each file under a temporary name (beside it, or in the
 * staging folder), then renamed into place, so the ERP never reads a partial file. A server that
 * refuses rename cannot do that: with a staging folder, files are written there under their final
 * names (the documented limitation); without one the write fails with DOCEX_SFTP_RENAME_REFUSED.
 */
import path from 'node:path/posix';
import { DocexError, isDocexError } from '../core/errors.js';
import { KeyedQueue } from '../core/keyed-queue.js';
import type { Logger } from '../core/logger.js';
import type { SftpServer } from '../sftp/types.js';
import { removeOldRemote } from './retention.js';
import type { OutputContent, OutputTarget, Removed } from './types.js';

/** `relPath` inside the remote `root`, refusing anything that would leave it. */
export function remoteInside(root: string, relPath: string): string {
  const normal = path.normalize(relPath);
  if (!relPath || path.isAbsolute(relPath) || normal === '..' || normal.startsWith('../') || normal === '.') {
    throw new DocexError('DOCEX_OUTPUT_PATH', `output path ${JSON.stringify(relPath)} leaves its folder`);
  }
  return path.join(root, normal);
}

export interface SftpTargetOptions {
  root: string;
  staging?: string | undefined;
  log: Logger;
  /** The temp names' writer (tempBaseName), where other agents write the same folder; absent: none. */
  writer?: string | undefined;
  /** Dead agents' writers: their temp file of a target goes once this write of it is in place. */
  deadWriters?: (() => Promise<readonly string[]>) | undefined;
}

export class SftpTarget implements OutputTarget {
  readonly description: string;
  private readonly made = new Set<string>();
  private renameRefused = false;

  constructor(
    private readonly server: SftpServer,
    private readonly options: SftpTargetOptions,
  ) {
    this.description = `${server.description}${options.root.startsWith('/') ? '' : '/'}${options.root}`;
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.made.has(dir)) return;
    await this.server.mkdirp(dir);
    this.made.add(dir);
  }

  /** Writes of one target one after the other: they share its temp name. */
  private readonly writing = new KeyedQueue();

  async write(relPath: string, content: OutputContent): Promise<void> {
    const target = remoteInside(this.options.root, relPath);
    return this.writing.run(target, () => this.writeOnce(relPath, target, content));
  }

  private async writeOnce(relPath: string, target: string, content: OutputContent): Promise<void> {
    const { staging, log } = this.options;
    try {
      if (this.renameRefused && staging) return await this.writeToStaging(relPath, content);
      await this.ensureDir(path.dirname(target));
      if (staging) await this.ensureDir(staging);
      // With a writer, a temp name of this process's own: another agent may write the same status file at once.
      await this.server.uploadAtomic(content, target, {
        tempDir: staging,
        ...(this.options.writer ? { writer: this.options.writer } : {}),
        ...(this.options.deadWriters ? { removeWriters: await this.deadWriters(target) } : {}),
      });
      log.debug({ server: this.server.description, remotePath: target }, 'output written');
    } catch (err) {
      if (isDocexError(err, 'DOCEX_SFTP_RENAME_REFUSED') && staging && !this.renameRefused) {
        this.renameRefused = true;
        log.warn(
          { server: this.server.description, staging },
          'sftp server refuses rename: outputs are written to the staging folder under their final names',
        );
        return this.writeToStaging(relPath, content);
      }
      // A folder we made may have been removed meanwhile: check again next time.
      this.made.clear();
      throw new DocexError(
        'DOCEX_OUTPUT_WRITE',
        `could not write ${relPath} to ${this.description}: ${(err as Error).message}`,
        { cause: err, details: { code: (err as DocexError).code, remotePath: target } },
      );
    }
  }

  /** The dead agents' writers, for this write to remove their temp files of `target`; best effort. */
  private async deadWriters(target: string): Promise<readonly string[]> {
    try {
      return (await this.options.deadWriters?.()) ?? [];
    } catch (err) {
      this.options.log.debug({ err, remotePath: target }, 'dead agents’ temp files not removed');
      return [];
    }
  }

  private async writeToStaging(relPath: string, content: OutputContent): Promise<void> {
    const staged = remoteInside(this.options.staging as string, relPath);
    await this.ensureDir(path.dirname(staged));
    await this.server.uploadAtomic(content, staged, { inPlace: true });
    this.options.log.debug(
      { server: this.server.description, remotePath: staged },
      'output written to staging',
    );
  }

  async exists(relPath: string): Promise<boolean> {
    if ((await this.server.stat(remoteInside(this.options.root, relPath))) !== undefined) return true;
    // Written to staging because the server refuses rename: it exists there.
    const { staging } = this.options;
    return (
      this.renameRefused &&
      staging !== undefined &&
      (await this.server.stat(remoteInside(staging, relPath))) !== undefined
    );
  }

  async sizeOf(relPath: string): Promise<number | undefined> {
    const sizeIfFile = (e: { type: string; size: number } | undefined) =>
      e?.type === 'file' ? e.size : undefined;
    const entry = await this.server.stat(remoteInside(this.options.root, relPath));
    if (entry || !this.renameRefused || this.options.staging === undefined) return sizeIfFile(entry);
    // Written to staging because the server refuses rename: its size is there.
    return sizeIfFile(await this.server.stat(remoteInside(this.options.staging, relPath)));
  }

  /** Old files in the folder (and in staging, where a server that refuses rename has them). */
  async removeOlderThan(cutoffMs: number): Promise<Removed> {
    const total = { files: 0, bytes: 0 };
    for (const dir of [
      this.options.root,
      ...(this.renameRefused && this.options.staging ? [this.options.staging] : []),
    ]) {
      if ((await this.server.stat(dir))?.type !== 'dir') continue;
      const removed = await removeOldRemote(this.server, dir, cutoffMs);
      total.files += removed.files;
      total.bytes += removed.bytes;
    }
    return total;
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}
