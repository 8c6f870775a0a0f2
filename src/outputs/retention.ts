/**
 * Removal of what retention no longer keeps: regular files whose modification time is before a
 * cutoff, in a local folder or a folder on an SFTP server, at any depth. Links are neither
 * followed nor removed. Shared by the archive and error folders and the output targets.
 */
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import posix from 'node:path/posix';
import type { SftpServer } from '../sftp/types.js';
import type { OutputTarget, Removed } from './types.js';

/** An output target and its `retention` (undefined: off). */
export interface RetainedOutput {
  /** `statuses`, `proofs`, `peppol-inbox`. */
  place: string;
  target: OutputTarget;
  retentionMs: number | undefined;
}

/**
 * Old files under the local `dir`, then the sub-folders (archive days) they leave empty; `dir`
 * itself stays. A missing `dir` is an error (the caller decides whether that matters).
 */
export async function removeOldLocal(dir: string, cutoffMs: number): Promise<Removed> {
  const tally = { files: 0, bytes: 0 };
  await sweepLocal(dir, cutoffMs, tally, true);
  return tally;
}

/** Answers whether `dir` is empty afterwards. */
async function sweepLocal(dir: string, cutoff: number, tally: Removed, root: boolean): Promise<boolean> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (!root && (err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  let left = entries.length;
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (await sweepLocal(full, cutoff, tally, false)) {
        await fs.rmdir(full).then(
          () => left--,
          () => {},
        );
      }
      continue;
    }
    if (!entry.isFile()) continue;
    const st = await fs.lstat(full).catch(() => undefined);
    if (!st || st.mtimeMs >= cutoff) continue;
    await fs.unlink(full).then(
      () => {
        left--;
        tally.files++;
        tally.bytes += st.size;
      },
      () => {},
    );
  }
  return left === 0;
}

/**
 * Old files under the remote `dir`. Emptied folders stay: the server interface has no rmdir, and
 * an ERP may watch them. A file the server refuses to remove is left for the next pass.
 */
export async function removeOldRemote(server: SftpServer, dir: string, cutoffMs: number): Promise<Removed> {
  const tally = { files: 0, bytes: 0 };
  const walk = async (at: string): Promise<void> => {
    for (const entry of await server.list(at)) {
      const full = posix.join(at, entry.name);
      if (entry.type === 'dir') await walk(full);
      else if (entry.type === 'file' && entry.mtimeMs < cutoffMs) {
        await server.remove(full).then(
          () => {
            tally.files++;
            tally.bytes += entry.size;
          },
          () => {},
        );
      }
    }
  };
  await walk(dir);
  return tally;
}
