/**
 * The remote half of a file's last step: once the journal says done or rejected, the remote file
 * leaves `.processing/` for the remote archive (or is deleted), or for the remote error folder with
 * its reason files beside it. Like the local placeFile, the side files are written first and the data
 * file renamed last: a crash in between leaves it in `.processing/`, where the next poll finishes the
 * move again (the reason files are simply rewritten). A server that refuses RENAME cannot move
 * anything: the remote file is removed instead (its copy stays in the local archive/error folder).
 */
import path from 'node:path';
import { isDocexError } from '../../core/errors.js';
import type { SftpServer } from '../../sftp/types.js';
import { numberedRemoteName, remoteJoin } from './remote-paths.js';

export const RENAME_REFUSED = 'DOCEX_SFTP_RENAME_REFUSED';

export type RemoteOps = Pick<SftpServer, 'stat' | 'rename' | 'mkdirp' | 'remove' | 'uploadAtomic'>;

export interface RemoteSideFile {
  suffix: string;
  content: string;
}

export type RemoteOutcome =
  | { kind: 'archive'; dir: string }
  | { kind: 'delete' }
  | { kind: 'error'; dir: string; sideFiles: readonly RemoteSideFile[] };

export interface RemoteMove {
  /** Where the data file is now. */
  from: string;
  /** The name it gets in the target folder (the ERP's name). */
  name: string;
  /** Marker files (`invoice.pdf.done`): they follow the data file's placed name. */
  markers?: readonly { path: string; suffix: string }[];
  /** Files that travel along under their own names (a payload-pdf sidecar). */
  companions?: readonly string[];
}

export interface RemoteFinish {
  /** Where the data file went; undefined when it was removed. */
  placed: string | undefined;
  /** The server refused a rename: the file was removed instead. */
  renameRefused: boolean;
}

/** A name in `dir` not taken yet: `name`, then `stem.2.ext`, … (renames never replace a file). */
export async function freeRemoteName(
  server: Pick<SftpServer, 'stat'>,
  dir: string,
  name: string,
): Promise<string> {
  if ((await server.stat(remoteJoin(dir, name))) === undefined) return name;
  for (let n = 2; n < 1_000; n++) {
    const candidate = numberedRemoteName(name, n);
    if ((await server.stat(remoteJoin(dir, candidate))) === undefined) return candidate;
  }
  return numberedRemoteName(name, Date.now());
}

export async function removeIfThere(server: RemoteOps, file: string): Promise<void> {
  if ((await server.stat(file)) !== undefined) await server.remove(file);
}

/** Removes the data file and whatever travelled with it. */
async function removeAll(server: RemoteOps, move: RemoteMove): Promise<void> {
  for (const m of move.markers ?? []) await removeIfThere(server, m.path);
  for (const c of move.companions ?? []) await removeIfThere(server, c);
  await server.remove(move.from);
}

/**
 * Finishes one remote file. `renameRefused`: the folder already knows its server refuses RENAME
 * (the journal-only claim), so no rename is tried.
 */
export async function finishRemote(
  server: RemoteOps,
  move: RemoteMove,
  outcome: RemoteOutcome,
  knownRefused = false,
): Promise<RemoteFinish> {
  let renameRefused = knownRefused;
  if (outcome.kind === 'delete') {
    await removeAll(server, move);
    return { placed: undefined, renameRefused };
  }
  await server.mkdirp(outcome.dir);
  const target = remoteJoin(outcome.dir, await freeRemoteName(server, outcome.dir, move.name));
  if (outcome.kind === 'error') {
    try {
      for (const side of outcome.sideFiles) {
        // A left-over from an interrupted finish (the data file is renamed last, so no ERP reads it yet).
        await removeIfThere(server, `${target}${side.suffix}`);
        await server.uploadAtomic(side.content, `${target}${side.suffix}`);
      }
    } catch (err) {
      // Writing under a temporary name and renaming is impossible there too: the reason stays local.
      if (!isDocexError(err, RENAME_REFUSED)) throw err;
      renameRefused = true;
    }
  }
  if (renameRefused) {
    await removeAll(server, move);
    return { placed: undefined, renameRefused: true };
  }
  try {
    for (const m of move.markers ?? []) {
      if ((await server.stat(m.path)) !== undefined) await server.rename(m.path, `${target}${m.suffix}`);
    }
    for (const c of move.companions ?? []) {
      if ((await server.stat(c)) === undefined) continue;
      const base = path.posix.basename(c);
      await server.rename(c, remoteJoin(outcome.dir, await freeRemoteName(server, outcome.dir, base)));
    }
    await server.rename(move.from, target);
    return { placed: target, renameRefused: false };
  } catch (err) {
    if (!isDocexError(err, RENAME_REFUSED)) throw err;
    await removeAll(server, move);
    return { placed: undefined, renameRefused: true };
  }
}
