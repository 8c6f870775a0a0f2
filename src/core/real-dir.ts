/**
 * Folders the agent writes into (.processing, archive, error, spools, outputs) must be real
 * directories. Anyone who can write to a drop folder can replace its `.error` with a symbolic link
 * to any other directory; the agent would then write the dropped file and its records there.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from './errors.js';
import { makeSharedDir } from './shared-dir.js';

export const FOLDER_UNSAFE_CODE = 'DOCEX_FOLDER_UNSAFE';

/** Throws DOCEX_FOLDER_UNSAFE when `dir` exists but is a symbolic link or not a directory. */
export async function assertRealDir(dir: string): Promise<void> {
  const st = await fs.lstat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!st || (st.isDirectory() && !st.isSymbolicLink())) return;
  const what = st.isSymbolicLink() ? 'a symbolic link' : 'not a directory';
  throw new DocexError(
    FOLDER_UNSAFE_CODE,
    `${dir} is ${what}; the agent writes only into real directories. Replace it with a directory.`,
    { details: { dir } },
  );
}

/**
 * mkdir -p (a shared folder takes its parent's group and access: shared-dir.ts), then the check:
 * a folder made by someone else in between is judged too. Answers the shared folders it made.
 */
export async function ensureRealDir(dir: string, privateMode?: number): Promise<string[]> {
  // A folder of the agent's own (a batch being unpacked) keeps `privateMode`.
  let made: string[] = [];
  if (privateMode === undefined) made = await makeSharedDir(dir);
  else await fs.mkdir(dir, { recursive: true, mode: privateMode });
  await assertRealDir(dir);
  return made;
}

/**
 * Every level from `root` down to `dir` (both included) checked: a day folder made inside an
 * archive folder that was swapped for a link is refused too.
 */
export async function assertRealPath(root: string, dir: string): Promise<void> {
  const rel = path.relative(root, dir);
  const below = rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? [] : rel.split(path.sep);
  let current = root;
  await assertRealDir(current);
  for (const part of below) {
    current = path.join(current, part);
    await assertRealDir(current);
  }
}
