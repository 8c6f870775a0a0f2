/**
 * Claiming a complete file: an atomic rename into `<folder>/.processing/` so neither a second agent
 * nor the ERP touches it while it is in flight; putting it back; finding what a crash left there.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError, isDocexError } from '../../core/errors.js';
import { errnoOf, exists, freeName, inDir, type RenameFn, writeFileAtomic } from '../../core/fs.js';
import { assertRealDir, assertRealPath, ensureRealDir } from '../../core/real-dir.js';
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
 * Times a claim makes its sub-folder of `.processing/` again when it went between its mkdir and the
 * rename (removed as emptied when the last file of it finished: removeEmptiedClaimDirs).
 */
const CLAIM_DIR_TRIES = 5;

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
  subFolders: readonly string[] = [],
): Promise<ClaimResult> {
  // A `.processing` swapped for a link would carry claimed files elsewhere: refused (DOCEX_FOLDER_UNSAFE).
  await assertRealDir(processingDir);
  const name = path.basename(sourcePath);
  for (let attempt = 1; ; attempt++) {
    const dir = await claimDirOf(processingDir, subFolders);
    const target = path.join(dir, await freeName(dir, name));
    // Numbered because the name is in flight already: its own name is noted first, so a crash before
    // the claim is recorded still lets recovery take the file under the name it was dropped with.
    const noted = path.basename(target) !== name;
    if (noted) {
      await writeClaimNote(target, { name, ...expected });
      // The note's folder is made again when missing: every level is judged again before the rename.
      await assertRealPath(processingDir, dir);
    }
    try {
      // `.processing/` itself is made again when an operator removed it; a sub-folder by claimDirOf,
      // level by level, never through a link.
      await (subFolders.length === 0
        ? inDir(dir, () => rename(sourcePath, target))
        : rename(sourcePath, target));
    } catch (err) {
      // Nothing came in under that name (another claimer took the file): its note goes too.
      if (noted) await forgetClaimNote(target);
      if (errnoOf(err) === 'ENOENT') {
        // The sub-folder went (emptied by a file that finished) while the file is still there.
        const dirGone = subFolders.length > 0 && !(await exists(dir)) && (await exists(sourcePath));
        if (dirGone && attempt < CLAIM_DIR_TRIES) continue;
        return { outcome: 'lost' };
      }
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
}

/**
 * Removes the sub-folders of `.processing/` that the file claimed at `claimedPath` left empty when
 * it left (archived, refused, put back): its own folder and each emptied parent, with their empty
 * claim-note folders, never `.processing/` itself nor anything outside it (the drop folder's own
 * sub-folders are the ERP's). Only empty folders go (rmdir): one a new claim put a file into stays
 * (ENOTEMPTY), one already gone is fine, and a claim whose folder went between its mkdir and its
 * rename makes it again (claimFile). Best effort: a folder that stays is only untidy.
 */
export async function removeEmptiedClaimDirs(processingDir: string, claimedPath: string): Promise<void> {
  const relative = path.relative(processingDir, path.dirname(claimedPath));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
  const segments = relative.split(path.sep);
  // A hidden folder of `.processing/` is the agent's own (a batch being unpacked, claim notes).
  if (segments.some((s) => s.startsWith('.'))) return;
  for (let depth = segments.length; depth > 0; depth--) {
    const dir = path.join(processingDir, ...segments.slice(0, depth));
    await fs.rmdir(path.join(dir, CLAIM_NOTES_DIR)).catch(() => undefined);
    try {
      await fs.rmdir(dir);
    } catch (err) {
      // Gone already (another file of it finished too): its parent may be empty now.
      if (errnoOf(err) !== 'ENOENT') return;
    }
  }
}

/**
 * The folder of `.processing/` a file of a recursive folder's sub-folder is claimed into: the same
 * sub-path (`.processing/acme/invoices/`), so recovery knows where it was dropped. Each level is
 * made when missing (its entry fsynced) and must be a real directory: never written through a link.
 * A claimed file in the way (`acme` taken from the top while `acme/x.pdf` waits) is no attack: the
 * claim fails for now (DOCEX_SOURCE_CLAIM_FAILED, ENOTDIR) and is tried again once it has moved on.
 */
export async function claimDirOf(processingDir: string, subFolders: readonly string[]): Promise<string> {
  let dir = processingDir;
  for (const name of subFolders) {
    dir = path.join(dir, name);
    const st = await fs.lstat(dir).catch(() => undefined);
    if (st?.isFile()) {
      throw new DocexError('DOCEX_SOURCE_CLAIM_FAILED', 'a claimed file stands where its sub-folder goes', {
        details: { file: name, errno: 'ENOTDIR' },
      });
    }
    await assertRealDir(dir);
    await ensureRealDir(dir);
  }
  return dir;
}

/**
 * Renames `from` (a finished download in the spool's `.incoming/`) to `name` in its sub-folder of
 * `.processing/`, made level by level (claimDirOf). The sub-folder may go between its mkdir and the
 * rename (emptied by a file that left it: removeEmptiedClaimDirs): made again, a few times, while
 * `from` is still there. Returns the path it went to.
 */
export async function renameIntoClaimDir(
  processingDir: string,
  subFolders: readonly string[],
  from: string,
  name: string,
  rename: RenameFn = fs.rename,
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const dir = await claimDirOf(processingDir, subFolders);
    const target = path.join(dir, name);
    try {
      await rename(from, target);
      return target;
    } catch (err) {
      const dirGone = errnoOf(err) === 'ENOENT' && !(await exists(dir)) && (await exists(from));
      if (!dirGone || subFolders.length === 0 || attempt >= CLAIM_DIR_TRIES) throw err;
    }
  }
}

/** Whether a claim failed because a claimed file stands where its sub-folder goes (claimDirOf): it waits. */
export function fileInTheWay(err: unknown): boolean {
  return isDocexError(err, 'DOCEX_SOURCE_CLAIM_FAILED') && err.details?.['errno'] === 'ENOTDIR';
}

/** What a file waiting for a file of its sub-folder's name to move on is said once with. */
export const FILE_IN_THE_WAY =
  'a claimed file has the name of one of its sub-folders: left in place until that file has moved on';

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
  /** Its name in `.processing/` (numbered when its own name was in flight already). */
  name: string;
  /** The name it was dropped with, when it was claimed under a numbered one (its claim note). */
  originalName?: string;
  /**
   * Its path below `.processing/`, POSIX: its name, or in a recursive folder the sub-path it was
   * dropped at (`acme/invoices/x.pdf`), kept by the claim so its original path is known again.
   */
  relativePath: string;
  path: string;
  size: number;
  mtimeMs: number;
  /** When it was moved in (a rename sets ctime), by this host's clock. */
  ctimeMs: number;
  /** The done-marker moved in with it, if any. */
  markerPath?: string;
}

/** Sub-folders of `.processing/` looked into at most (a recursive folder's deepest is 16). */
const MAX_RECOVERY_DEPTH = 32;

/**
 * Files left in `<folder>/.processing/` after a crash; the pipeline matches them against the journal.
 * Markers are attached to their data file, not listed on their own. Bounded by what was in flight.
 * `recursive`: its sub-folders too (a recursive folder's claims keep their sub-path there); hidden
 * ones (a batch being unpacked) and links never. Sub-folders found empty are removed on the way.
 */
export async function recoverProcessing(
  folderPath: string,
  options: { markerSuffixes?: readonly string[]; recursive?: boolean } = {},
): Promise<RecoveredFile[]> {
  const files: RecoveredFile[] = [];
  await recoverFrom(path.join(folderPath, PROCESSING_DIR), [], options, files);
  return files.sort((a, b) =>
    a.relativePath < b.relativePath ? -1 : a.relativePath > b.relativePath ? 1 : 0,
  );
}

async function recoverFrom(
  dir: string,
  sub: readonly string[],
  options: { markerSuffixes?: readonly string[]; recursive?: boolean },
  files: RecoveredFile[],
): Promise<void> {
  const suffixes = options.markerSuffixes ?? [];
  let handle: Awaited<ReturnType<typeof fs.opendir>>;
  try {
    handle = await fs.opendir(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return;
    throw err;
  }
  const here: RecoveredFile[] = [];
  const markers = new Set<string>();
  const folders: string[] = [];
  for await (const entry of handle) {
    if (entry.isDirectory()) {
      if (options.recursive && !entry.name.startsWith('.') && sub.length < MAX_RECOVERY_DEPTH)
        folders.push(entry.name);
      continue;
    }
    if (!entry.isFile()) continue;
    if (markerSuffixOf(entry.name, suffixes) !== undefined) {
      markers.add(entry.name);
      continue;
    }
    const p = path.join(dir, entry.name);
    try {
      const st = await fs.lstat(p);
      here.push({
        name: entry.name,
        relativePath: [...sub, entry.name].join('/'),
        path: p,
        size: st.size,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
      });
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
    }
  }
  const notes = await readClaimNotes(dir, new Set(here.map((f) => f.name)));
  for (const file of here) {
    const marker = suffixes.map((s) => file.name + s).find((m) => markers.has(m));
    if (marker !== undefined) file.markerPath = path.join(dir, marker);
    const note = notes.get(file.name);
    // The note of this very file (a stale one of an earlier file of this name has another stamp).
    if (note && note.size === file.size && note.mtimeMs === file.mtimeMs) file.originalName = note.name;
  }
  files.push(...here);
  for (const name of folders) await recoverFrom(path.join(dir, name), [...sub, name], options, files);
  // A sub-folder its files all left (a crash between the move and the removal, an earlier agent's):
  // removed as removeEmptiedClaimDirs would have; its emptied parents follow as the walk returns.
  if (sub.length > 0 && here.length === 0 && markers.size === 0) {
    await fs.rmdir(path.join(dir, CLAIM_NOTES_DIR)).catch(() => undefined);
    await fs.rmdir(dir).catch(() => undefined);
  }
}

/**
 * Claim notes: for a file claimed under a numbered name (`invoice.2.pdf`, its own name being in
 * flight already), the name it was dropped with and its stamp, in `.processing/.names/` (one file
 * per claimed name, named by its hash: a 255-byte name fits). Written before the rename, read by
 * recovery for a file whose claim was never recorded, removed once the journal has the claim
 * (forgetClaimNote). Routes and the job's file name then come from the dropped name, never from
 * the numbered one.
 */
export const CLAIM_NOTES_DIR = '.names';

/** A note whose file is not in `.processing/` is removed once this old (its claimer long done). */
const STALE_NOTE_MS = 10 * 60_000;

interface ClaimNote {
  claimed: string;
  name: string;
  size: number;
  mtimeMs: number;
}

function notePathOf(claimedPath: string): string {
  const key = createHash('sha256').update(path.basename(claimedPath)).digest('hex');
  return path.join(path.dirname(claimedPath), CLAIM_NOTES_DIR, `${key}.json`);
}

async function writeClaimNote(claimedPath: string, note: { name: string; size: number; mtimeMs: number }) {
  const file = notePathOf(claimedPath);
  const dir = path.dirname(file);
  // Like .processing itself: never written through a link.
  await assertRealDir(dir);
  const content: ClaimNote = { claimed: path.basename(claimedPath), ...note };
  await inDir(dir, () => writeFileAtomic(file, JSON.stringify(content)));
}

/** The claim of the file at `claimedPath` is recorded: its note (if it had one) is not needed any more. */
export async function forgetClaimNote(claimedPath: string): Promise<void> {
  const file = notePathOf(claimedPath);
  await fs.rm(file, { force: true });
  // Left empty, the folder goes too (one a claimer is writing in is not empty; one it finds gone
  // it makes again: writeClaimNote).
  await fs.rmdir(path.dirname(file)).catch(() => undefined);
}

/** The notes of `.processing/`, by claimed name; those of files no longer there and old enough go. */
async function readClaimNotes(
  processingDir: string,
  present: ReadonlySet<string>,
): Promise<Map<string, ClaimNote>> {
  const dir = path.join(processingDir, CLAIM_NOTES_DIR);
  const notes = new Map<string, ClaimNote>();
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR') return notes;
    throw err;
  }
  for (const entry of names) {
    if (!entry.endsWith('.json')) continue;
    const file = path.join(dir, entry);
    const [text, st] = await Promise.all([
      fs.readFile(file, 'utf8').catch(() => undefined),
      fs.lstat(file).catch(() => undefined),
    ]);
    const note = parseNote(text);
    if (note && present.has(note.claimed)) notes.set(note.claimed, note);
    else if (st && Date.now() - st.mtimeMs >= STALE_NOTE_MS) await fs.rm(file, { force: true });
  }
  return notes;
}

function parseNote(text: string | undefined): ClaimNote | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Partial<ClaimNote>;
    if (
      typeof value.claimed === 'string' &&
      typeof value.name === 'string' &&
      typeof value.size === 'number' &&
      typeof value.mtimeMs === 'number' &&
      path.basename(value.name) === value.name
    ) {
      return value as ClaimNote;
    }
  } catch {
    // A torn or foreign file: not a note.
  }
  return undefined;
}
