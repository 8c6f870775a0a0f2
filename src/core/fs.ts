/**
 * The agent's file helpers, one of each: does a path exist, a free name in a folder, write into a
 * folder that may be missing, write a file atomically, move a file (across file systems too).
 */
import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from './errors.js';
import { ensureRealDir } from './real-dir.js';
import { tempBaseName } from './temp-name.js';

/** The rename to use; tests inject one that throws EXDEV or races. */
export type RenameFn = (from: string, to: string) => Promise<void>;

/** The errno code of a failed file operation (`ENOENT`, `EXDEV`…), if it has one. */
export function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Whether anything (a file, a folder, a link: not followed) is at `p`. Only ENOENT answers false;
 * any other failure (EACCES, EIO) is thrown.
 */
export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw err;
  }
}

/** As `exists`, but a path that cannot be looked at counts as absent: for checks that only skip work. */
export function existsOrFalse(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/** Whether a regular file (not a link, not a folder) is at `p`; any failure counts as no. */
export function isPlainFile(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    (st) => st.isFile(),
    () => false,
  );
}

/** `invoice.pdf`, 2 → `invoice.2.pdf`; keeps the extension so classification still works. */
export function numberedName(name: string, n: number): string {
  const ext = path.extname(name);
  const stem = ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name;
  return `${stem}.${n}${ext.length < name.length ? ext : ''}`;
}

/** Most file systems refuse a name over 255 bytes. */
const NAME_MAX_BYTES = 255;

/**
 * numberedName, its stem cut (on a character boundary) when the number would push the name past
 * NAME_MAX_BYTES: a 255-byte name dropped twice is `stem….2.ext`, not ENAMETOOLONG at every try.
 */
function fittingNumberedName(name: string, n: number): string {
  const numbered = numberedName(name, n);
  const over = Buffer.byteLength(numbered) - NAME_MAX_BYTES;
  if (over <= 0) return numbered;
  const ext = path.extname(name);
  let stem = ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name;
  const keep = Buffer.byteLength(stem) - over;
  while (stem.length > 0 && Buffer.byteLength(stem) > keep) stem = stem.slice(0, -1);
  if (/[\ud800-\udbff]$/.test(stem)) stem = stem.slice(0, -1);
  return numberedName(`${stem}${ext.length < name.length ? ext : ''}`, n);
}

/** The names freeName tries, in its order: `name`, then `stem.2.ext`, `stem.3.ext`, … */
export function* numberedNames(name: string): Generator<string> {
  yield name;
  for (let n = 2; n < 10_000; n++) yield fittingNumberedName(name, n);
}

/** A name in `dir` not taken yet: `name`, then `stem.2.ext`, `stem.3.ext`, … */
export async function freeName(dir: string, name: string): Promise<string> {
  for (const candidate of numberedNames(name)) {
    if (!(await exists(path.join(dir, candidate)))) return candidate;
  }
  // Thousands of same-named leftovers: fall back to a random tag rather than loop forever.
  return fittingNumberedName(name, Number.parseInt(randomBytes(4).toString('hex'), 16));
}

/**
 * Runs `op`, which writes into `dir`; when it fails with ENOENT and `dir` is missing, makes `dir`
 * (a real directory with its parent's group: real-dir.ts) and runs it once more. A folder is not
 * made ahead of every file (each mkdir is a round trip through the thread pool), yet one that was
 * never made or that an operator removed is made.
 */
export async function inDir<T>(dir: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if ((errnoOf(err) !== 'ENOENT' && errnoOf(cause) !== 'ENOENT') || (await exists(dir))) throw err;
    await ensureRealDir(dir);
    return op();
  }
}

/** The hidden temp name beside `target` (see tempBaseName: the same for every attempt). */
export function tempNameFor(target: string, kind = 'tmp'): string {
  return path.join(path.dirname(target), tempBaseName(target, kind));
}

/**
 * Writes under a hidden temp name, fsyncs, then renames into place (replacing an older copy). A
 * failed write (ENOSPC) removes its temp file: nothing partial stays beside the outputs.
 */
export async function writeFileAtomic(target: string, content: string): Promise<void> {
  const temp = tempNameFor(target);
  try {
    const handle = await fs.open(temp, 'w', 0o640);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}

/** Seams for tests: a rename that throws EXDEV, a copy that fails half-way. */
export interface MoveSeams {
  rename?: RenameFn;
  copyFile?: (from: string, to: string) => Promise<void>;
}

const cloneOrCopy = (from: string, to: string) => fs.copyFile(from, to, fsc.COPYFILE_FICLONE);

/**
 * Moves `from` to the path `to`: a rename, or across file systems (EXDEV) a copy to a hidden temp
 * name, fsync, rename into place, then unlink of the source, so `to` never shows a partial file and
 * a crash leaves at worst a copy, never a loss. A failed rename other than EXDEV is
 * DOCEX_PLACE_FAILED; a failed copy removes its temp file and keeps the source.
 */
export async function moveFile(from: string, to: string, seams: MoveSeams = {}): Promise<void> {
  try {
    await (seams.rename ?? fs.rename)(from, to);
    return;
  } catch (err) {
    if (errnoOf(err) !== 'EXDEV') {
      throw new DocexError('DOCEX_PLACE_FAILED', `could not move ${path.basename(from)}`, {
        cause: err,
        details: { file: path.basename(from), dir: path.dirname(to) },
      });
    }
  }
  const temp = tempNameFor(to, 'copy.tmp');
  try {
    await (seams.copyFile ?? cloneOrCopy)(from, temp);
    const handle = await fs.open(temp, 'r+');
    await handle.sync().finally(() => handle.close());
    await fs.rename(temp, to);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  await fs.unlink(from);
}
