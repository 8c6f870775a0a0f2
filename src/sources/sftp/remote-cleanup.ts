/**
 * The sub-folders of the remote `.processing/` (or of an agent's claim folder in it) that a recursive
 * folder's claims made, removed once empty: when the last file of one leaves (archived, refused,
 * removed, put back, adopted by another agent) with each parent it leaves empty, and those a crash
 * left empty when the folder is reconciled. Only empty folders go (RMDIR): one a new claim put a file
 * into stays, one already gone is passed over, and a claim whose folder went between its MKDIR and
 * its RENAME makes it again (source.ts). Never the root itself nor anything outside it: the drop
 * tree's own sub-folders, the archive and error folders are the operator's.
 */
import path from 'node:path';
import { relativeSegments } from '../../domain/relative-path.js';
import type { SftpServer } from '../../sftp/types.js';
import { remoteJoin } from './remote-paths.js';
import type { RemoteTree } from './remote-tree.js';

type FolderRemover = Pick<SftpServer, 'removeEmptyFolder'>;

/** The folders of `file`'s path below `root` (its sub-path), or undefined when it is not below it. */
function foldersBelow(root: string, file: string): string[] | undefined {
  const relative = path.posix.relative(root, path.posix.dirname(file));
  if (relative === '' || relative.startsWith('..') || path.posix.isAbsolute(relative)) return undefined;
  const segments = relativeSegments(relative);
  // A hidden folder is the agent's own; never one a hostile name could steer.
  if (segments === undefined || segments.some((s) => s.startsWith('.'))) return undefined;
  return segments;
}

/** `file` left its folder below `root`: that folder and each parent it leaves empty go, not `root`. */
export async function removeEmptiedRemoteDirs(
  server: FolderRemover,
  root: string,
  file: string,
): Promise<void> {
  const folders = foldersBelow(root, file);
  if (folders === undefined) return;
  for (let depth = folders.length; depth > 0; depth--) {
    // Gone already (another file of it left too): its parent may be empty now.
    if ((await server.removeEmptyFolder(remoteJoin(root, ...folders.slice(0, depth)))) === 'kept') return;
  }
}

/**
 * The folders of a listed tree below `root` that held nothing when it was listed, deepest first,
 * and each parent that held only those: what a crash left between a file's move and its folder's removal.
 */
export async function removeEmptyRemoteDirs(
  server: FolderRemover,
  root: string,
  tree: RemoteTree,
): Promise<void> {
  const children = new Map<string, number>();
  for (const seen of tree.seen) {
    const parent = path.posix.dirname(seen);
    if (parent !== '.') children.set(parent, (children.get(parent) ?? 0) + 1);
  }
  const deepestFirst = [...tree.folders].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const folder of deepestFirst) {
    if ((children.get(folder) ?? 0) > 0) continue;
    if ((await server.removeEmptyFolder(remoteJoin(root, folder))) === 'kept') continue;
    const parent = path.posix.dirname(folder);
    if (parent !== '.') children.set(parent, (children.get(parent) ?? 1) - 1);
  }
}
