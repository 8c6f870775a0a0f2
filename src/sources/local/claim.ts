/**
 * Claiming a complete file: an atomic rename into `<folder>/.processing/` so neither a second agent
 * nor the ERP touches it while it is in flight, plus the moves used later for archive/error folders.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../../core/errors.js';
import { assertRealDir, ensureRealDir } from '../../core/real-dir.js';
import { markerSuffixOf } from './stability.js';

export const PROCESSING_DIR = '.processing';

/** The rename to use; tests inject one that throws EXDEV or races. */
export type RenameFn = (from: string, to: string) => Promise<void>;

export interface FileStamp {
  size: number;
  mtimeMs: number;
}

export type ClaimResult =
  | { outcome: 'claimed'; claimedPath: string; size: number; mtimeMs: number }
  /** The source vanished before our rename: another claimer (or the ERP) took it. */
  | { outcome: 'lost' }
  /** Claimed, but size/mtime differ from the stable observation: someone is still writing. */
  | { outcome: 'changed'; claimedPath: string; size: number; mtimeMs: number };

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if (errno(err) === 'ENOENT') return false;
    throw err;
  }
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

/** A name in `dir` not taken yet: `name`, then `stem.2.ext`, `stem.3.ext`, … */
export async function freeName(dir: string, name: string): Promise<string> {
  if (!(await exists(path.join(dir, name)))) return name;
  for (let n = 2; n < 10_000; n++) {
    const candidate = fittingNumberedName(name, n);
    if (!(await exists(path.join(dir, candidate)))) return candidate;
  }
  // Thousands of same-named leftovers: fall back to a random tag rather than loop forever.
  return fittingNumberedName(name, Number.parseInt(randomBytes(4).toString('hex'), 16));
}

export async function ensureDir(dir: string): Promise<void> {
  // The parent's group and group access (the ERP's group reads archives); a real directory, never a link.
  await ensureRealDir(dir);
}

/**
 * Runs `op`, which writes into `dir`; when it fails with ENOENT and `dir` is missing, makes `dir`
 * and runs it once more. A folder is not made ahead of every file (each mkdir is a round trip
 * through the thread pool), yet one that was never made or that an operator removed is made.
 */
export async function inDir<T>(dir: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if ((errno(err) !== 'ENOENT' && errno(cause) !== 'ENOENT') || (await exists(dir))) throw err;
    await ensureDir(dir);
    return op();
  }
}

/**
 * Moves `sourcePath` into `processingDir` by rename (same filesystem: the `.processing` folder sits
 * beside the file). When two claimers race on one file exactly one rename succeeds; the other sees
 * ENOENT and gets `lost`. `expected` is the stable observation the claim was decided on.
 */
export async function claimFile(
  sourcePath: string,
  processingDir: string,
  expected: FileStamp,
  rename: RenameFn = fs.rename,
): Promise<ClaimResult> {
  // A `.processing` swapped for a link would carry claimed files elsewhere: refused (DOCEX_FOLDER_UNSAFE).
  await assertRealDir(processingDir);
  const target = path.join(processingDir, await freeName(processingDir, path.basename(sourcePath)));
  try {
    await inDir(processingDir, () => rename(sourcePath, target));
  } catch (err) {
    if (errno(err) === 'ENOENT') return { outcome: 'lost' };
    throw new DocexError('DOCEX_SOURCE_CLAIM_FAILED', 'could not move the file into .processing', {
      cause: err,
      details: { file: path.basename(sourcePath), errno: errno(err) },
    });
  }
  const st = await fs.lstat(target);
  const stamp = { size: st.size, mtimeMs: st.mtimeMs };
  if (stamp.size !== expected.size || stamp.mtimeMs !== expected.mtimeMs) {
    return { outcome: 'changed', claimedPath: target, ...stamp };
  }
  return { outcome: 'claimed', claimedPath: target, ...stamp };
}

/**
 * Puts a claimed file back where it was (after a `changed` claim). Uses link + unlink so an existing
 * file of that name is never overwritten; returns false when the name is taken again.
 */
export async function releaseClaim(claimedPath: string, originalPath: string): Promise<boolean> {
  try {
    await fs.link(claimedPath, originalPath);
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    // Some mounts (SMB, some FUSE) have no hard links: check then rename, a small race we accept.
    if (errno(err) !== 'EPERM' && errno(err) !== 'ENOTSUP' && errno(err) !== 'EOPNOTSUPP') throw err;
    if (await exists(originalPath)) return false;
    await fs.rename(claimedPath, originalPath);
    return true;
  }
  await fs.unlink(claimedPath);
  return true;
}

export interface RecoveredFile {
  name: string;
  path: string;
  size: number;
  mtimeMs: number;
  /** The done-marker moved in with it, if any. */
  markerPath?: string;
}

/**
 * Files left in `<folder>/.processing/` after a crash; the pipeline matches them against the journal.
 * Markers are attached to their data file, not listed on their own. Bounded by what was in flight.
 */
export async function recoverProcessing(
  folderPath: string,
  options: { markerSuffixes?: readonly string[] } = {},
): Promise<RecoveredFile[]> {
  const dir = path.join(folderPath, PROCESSING_DIR);
  const suffixes = options.markerSuffixes ?? [];
  let handle: Awaited<ReturnType<typeof fs.opendir>>;
  try {
    handle = await fs.opendir(dir);
  } catch (err) {
    if (errno(err) === 'ENOENT') return [];
    throw err;
  }
  const files: RecoveredFile[] = [];
  const markers = new Set<string>();
  for await (const entry of handle) {
    if (!entry.isFile()) continue;
    if (markerSuffixOf(entry.name, suffixes) !== undefined) {
      markers.add(entry.name);
      continue;
    }
    const p = path.join(dir, entry.name);
    try {
      const st = await fs.lstat(p);
      files.push({ name: entry.name, path: p, size: st.size, mtimeMs: st.mtimeMs });
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }
  for (const file of files) {
    const marker = suffixes.map((s) => file.name + s).find((m) => markers.has(m));
    if (marker !== undefined) file.markerPath = path.join(dir, marker);
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface MoveOptions {
  /** When the target name exists: true → `stem.2.ext`; false → DOCEX_SOURCE_TARGET_EXISTS. */
  suffixIfExists?: boolean;
  rename?: RenameFn;
  /** The cross-filesystem copy; tests inject a failing one. */
  copyFile?: (from: string, to: string) => Promise<void>;
}

/**
 * Moves a file into `targetDir` (archive, error folder). Rename when possible; across filesystems
 * (EXDEV) copy to a temp dotfile, fsync, rename into place, then unlink the source, so the target
 * never shows a partial file and a crash leaves at worst a duplicate, never a loss.
 */
export async function moveToFolder(
  filePath: string,
  targetDir: string,
  options: MoveOptions = {},
): Promise<string> {
  const rename = options.rename ?? fs.rename;
  await ensureDir(targetDir);
  const name = path.basename(filePath);
  let targetName = name;
  if (await exists(path.join(targetDir, name))) {
    if (!options.suffixIfExists) {
      throw new DocexError(
        'DOCEX_SOURCE_TARGET_EXISTS',
        'a file of that name is already in the target folder',
        {
          details: { file: name, targetDir },
        },
      );
    }
    targetName = await freeName(targetDir, name);
  }
  const target = path.join(targetDir, targetName);
  try {
    await rename(filePath, target);
    return target;
  } catch (err) {
    if (errno(err) !== 'EXDEV') {
      throw new DocexError('DOCEX_SOURCE_MOVE_FAILED', 'could not move the file', {
        cause: err,
        details: { file: name, targetDir, errno: errno(err) },
      });
    }
  }
  const temp = path.join(targetDir, `.${targetName}.${randomBytes(4).toString('hex')}.docex-tmp`);
  try {
    await (options.copyFile ?? ((from, to) => fs.copyFile(from, to, fsc.COPYFILE_EXCL)))(filePath, temp);
    await fsyncPath(temp, 'r+');
    await fs.rename(temp, target);
    await fsyncPath(targetDir, 'r');
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  await fs.unlink(filePath);
  return target;
}

async function fsyncPath(p: string, flags: string): Promise<void> {
  const handle = await fs.open(p, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
