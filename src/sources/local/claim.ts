/**
 * Claiming a complete file: an atomic rename into `<folder>/.processing/` so neither a second agent
 * nor the ERP touches it while it is in flight; putting it back; finding what a crash left there.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../../core/errors.js';
import { errnoOf, exists, freeName, inDir, type RenameFn } from '../../core/fs.js';
import { assertRealDir } from '../../core/real-dir.js';
import { PROCESSING_DIR } from './kind.js';
import { markerSuffixOf } from './stability.js';

export { PROCESSING_DIR };

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
    if (errnoOf(err) === 'ENOENT') return { outcome: 'lost' };
    throw new DocexError('DOCEX_SOURCE_CLAIM_FAILED', 'could not move the file into .processing', {
      cause: err,
      details: { file: path.basename(sourcePath), errno: errnoOf(err) },
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
    if (errnoOf(err) === 'EEXIST') return false;
    // Some mounts (SMB, some FUSE) have no hard links: check then rename, a small race we accept.
    if (errnoOf(err) !== 'EPERM' && errnoOf(err) !== 'ENOTSUP' && errnoOf(err) !== 'EOPNOTSUPP') throw err;
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
  /** When it was moved in (a rename sets ctime), by this host's clock. */
  ctimeMs: number;
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
    if (errnoOf(err) === 'ENOENT') return [];
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
      files.push({ name: entry.name, path: p, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs });
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
    }
  }
  for (const file of files) {
    const marker = suffixes.map((s) => file.name + s).find((m) => markers.has(m));
    if (marker !== undefined) file.markerPath = path.join(dir, marker);
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
