/**
 * The listing of a recursive SFTP folder: the folder, then its sub-folders level by level (breadth
 * first) down to the depth, one LIST each, every file named by its path relative to the listed
 * folder (`acme/invoices/x.pdf`), as a local recursive folder names it. Entered like the local
 * TreeWatcher's folders: never a hidden one (`.processing`, `.archive`), one of the agent's own
 * (its archive or error folder inside the tree), a link (links are never followed), nor one whose
 * name is not a file name the agent takes (`..`, a `/`, control characters, not UTF-8). A remote
 * name is as hostile as a dropped file's: no path is built from a name that could leave the folder.
 */
import { outcomeOf } from '../../core/error-codes.js';
import { isDocexError } from '../../core/errors.js';
import { nameFault } from '../../domain/file-names.js';
import { steersPath } from '../../domain/relative-path.js';
import type { RemoteEntry } from '../../sftp/types.js';
import { mayBeUndecodable } from './bad-name.js';
import { isClaimFolder } from './claim-folders.js';
import { remoteJoin } from './remote-paths.js';

export type SkippedFolder =
  /** Its name is not a file name the agent takes (or is not UTF-8 on the server). */
  | 'bad-name'
  /** At the top of the tree, named like an agent's claim folder in `.processing/`. */
  | 'reserved'
  /** It could not be listed: permission denied, the server's own failure, not a folder after all. */
  | 'unlistable';

export interface RemoteTreeOptions {
  list(dir: string): Promise<RemoteEntry[]>;
  /** Whether the path exists as the listing spelled it (a U+FFFD may stand for lost bytes). */
  reachable(path: string): Promise<boolean>;
  /** Sub-folder levels entered below the root; 0: the root alone. */
  depth: number;
  /** Relative paths never entered (the agent's own folders inside the tree). */
  ownDirs?: ReadonlySet<string>;
  /** Sub-folders of the root named like agents' claim folders are not entered. */
  skipClaimFolders?: boolean;
  /** A sub-folder left alone, and why (said by the caller, once); `cause`: the error of an unlistable one. */
  onSkipped?(relative: string, why: SkippedFolder, cause?: unknown): void;
}

export interface RemoteTree {
  /** Files and other non-folder entries, each named by its relative path. */
  entries: RemoteEntry[];
  /** Every relative path listed, folders included (what is still there). */
  seen: string[];
  /** The sub-folders listed (entered), each by its relative path. */
  folders: string[];
}

export async function listRemoteTree(root: string, options: RemoteTreeOptions): Promise<RemoteTree> {
  const tree: RemoteTree = { entries: [], seen: [], folders: [] };
  let level: string[][] = [[]];
  for (let depth = 0; level.length > 0; depth++) {
    const next: string[][] = [];
    for (const folders of level) {
      const listed = await listFolder(root, folders, options);
      if (listed === undefined) continue;
      if (folders.length > 0) tree.folders.push(folders.join('/'));
      for (const entry of listed) {
        // A real server never lists such a name, a hostile one might: left out, whatever its type.
        if (steersPath(entry.name)) continue;
        const relative = [...folders, entry.name].join('/');
        tree.seen.push(relative);
        if (entry.type !== 'dir') {
          tree.entries.push({ ...entry, name: relative });
          continue;
        }
        if (depth >= options.depth) continue;
        const why = await skipReason(root, folders, entry.name, options);
        if (why === 'hidden') continue;
        if (why !== undefined) options.onSkipped?.(relative, why);
        else next.push([...folders, entry.name]);
      }
    }
    level = next;
  }
  return tree;
}

/** A sub-folder's listing; undefined when it is gone or shut (the rest of the tree is still listed). */
async function listFolder(
  root: string,
  folders: readonly string[],
  options: RemoteTreeOptions,
): Promise<RemoteEntry[] | undefined> {
  try {
    return await options.list(remoteJoin(root, ...folders));
  } catch (err) {
    // The root's failure is the poll's, and so is a broken connection: the server is at fault, not
    // the sub-folder. A sub-folder removed meanwhile is simply not there; one the server answers
    // with an error (shut, SSH_FX_FAILURE, a file listed as a folder) is left alone, so one bad
    // sub-folder never stops the rest of the tree.
    if (folders.length === 0 || connectionFailed(err)) throw err;
    if (isDocexError(err, 'DOCEX_SFTP_NOT_FOUND')) return undefined;
    options.onSkipped?.(folders.join('/'), 'unlistable', err);
    return undefined;
  }
}

/** The server could not be reached or kept connected; an error without a stable code is counted as one. */
function connectionFailed(err: unknown): boolean {
  return !isDocexError(err) || outcomeOf(err.code) === 'unreachable';
}

async function skipReason(
  root: string,
  folders: readonly string[],
  name: string,
  options: RemoteTreeOptions,
): Promise<SkippedFolder | 'hidden' | undefined> {
  const relative = [...folders, name].join('/');
  if (name.startsWith('.') || options.ownDirs?.has(relative)) return 'hidden';
  if (folders.length === 0 && options.skipClaimFolders && isClaimFolder(name)) return 'reserved';
  if (nameFault(name) !== undefined) return 'bad-name';
  // Not UTF-8 on the server: no request reaches it (bad-name.ts), its files could not be moved.
  if (mayBeUndecodable(name) && !(await options.reachable(remoteJoin(root, relative)))) return 'bad-name';
  return undefined;
}

/** `acme/invoices/x.pdf` → its folders and its name. */
export function splitRelative(relative: string): { folders: string[]; name: string } {
  const segments = relative.split('/');
  const name = segments.pop() ?? relative;
  return { folders: segments, name };
}
