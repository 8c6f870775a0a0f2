/**
 * Moves a claimed file out of `.processing/` into its archive or error folder. The side files are
 * written first and the data file renamed last: a crash in between leaves the file in
 * `.processing/`, where recovery places it again under the same free name (nothing is deleted).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { existsOrFalse, freeName, inDir, moveFile, numberedNames, writeFileAtomic } from '../core/fs.js';
import { KeyedQueue } from '../core/keyed-queue.js';
import { assertRealPath } from '../core/real-dir.js';

export interface SideFile {
  /** Appended to the placed file's name: `.result.json`, `.error.txt`. */
  suffix: string;
  content: string;
}

export interface PlaceOptions {
  /** Marker files moved in with the data file (`invoice.pdf.done`): they follow it. */
  markerSuffixes?: readonly string[];
  /** Files that travel with it under their own names (a payload-pdf sidecar). */
  companions?: readonly string[];
  /** The configured folder `dir` lies in (archive, error): every level from it down must be a real directory. */
  root?: string;
}

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** Most file systems refuse a name over 255 bytes. */
const NAME_MAX_BYTES = 255;
/** Room for the `.2`, `.3`… freeName may add. */
const NUMBER_ROOM_BYTES = 6;

/**
 * `name`, shortened when it and its longest side-file suffix would not fit in one directory
 * entry: the stem is cut (on a character boundary) and tagged with a hash of the whole name, the
 * extension kept. The records beside the file keep the name the ERP gave it.
 */
export function fitName(name: string, suffixBytes: number): string {
  const room = NAME_MAX_BYTES - suffixBytes - NUMBER_ROOM_BYTES;
  if (byteLength(name) <= room) return name;
  const ext = path.extname(name);
  const tag = `~${createHash('sha256').update(name).digest('hex').slice(0, 8)}`;
  let stem = name.slice(0, name.length - ext.length);
  const keep = Math.max(0, room - byteLength(tag) - byteLength(ext));
  while (byteLength(stem) > keep) stem = stem.slice(0, -1);
  // A cut surrogate pair would leave half a character.
  if (/[\ud800-\udbff]$/.test(stem)) stem = stem.slice(0, -1);
  return `${stem}${tag}${byteLength(ext) < room / 2 ? ext : ''}`;
}

/**
 * `root` with as many of `subFolders` below it as can be folders: a refused file of a recursive
 * folder keeps its sub-path in the error folder, but a file refused earlier under a sub-folder's
 * name (`acme`, refused from the top, before `acme/x.pdf`) is never replaced by a folder: the file
 * goes to the deepest folder that can hold it. A link is left in the path for placeFile to refuse
 * (DOCEX_FOLDER_UNSAFE).
 */
export async function placeableSubDir(root: string, subFolders: readonly string[]): Promise<string> {
  let dir = root;
  for (const name of subFolders) {
    const next = path.join(dir, name);
    const st = await fs.lstat(next).catch(() => undefined);
    if (st && !st.isDirectory() && !st.isSymbolicLink()) return dir;
    dir = next;
  }
  return dir;
}

/**
 * Placements into one directory, one at a time. Choosing a free name and renaming into it are two
 * steps: two items of the same name finishing together (every `index.csv` of a folder) would both
 * choose `index.5.csv`, and the second rename would replace the first file.
 */
const placements = new KeyedQueue();

/** Runs `task` while no other placement of this process writes into `dir`. */
export function placingInto<T>(dir: string, task: () => Promise<T>): Promise<T> {
  return placements.run(path.resolve(dir), task);
}

/**
 * Places `filePath` as `dir/name` (or `dir/stem.2.ext` when taken) with its side files beside it.
 * Answers the placed path.
 */
export function placeFile(
  filePath: string,
  dir: string,
  name: string,
  sideFiles: readonly SideFile[],
  options: PlaceOptions = {},
): Promise<string> {
  // The first write into a missing `dir` fails before anything moved: made then, and placed again.
  // Checked before each try: a folder swapped for a link is never written through.
  return placingInto(dir, () => placeFileInQueue(filePath, dir, name, sideFiles, options));
}

/** placeFile for a caller that runs in placingInto(dir) already. */
export function placeFileInQueue(
  filePath: string,
  dir: string,
  name: string,
  sideFiles: readonly SideFile[],
  options: PlaceOptions = {},
): Promise<string> {
  return inDir(dir, async () => {
    await assertRealPath(options.root ?? dir, dir);
    return placeInto(filePath, dir, name, sideFiles, options);
  });
}

function reservedBytes(sideSuffixes: readonly string[], options: PlaceOptions): number {
  return Math.max(0, ...sideSuffixes.map(byteLength), ...(options.markerSuffixes ?? []).map(byteLength));
}

/**
 * Where placeFile put `name` into `dir` earlier with a side file (`suffix`) whose content `matches`:
 * the names it would have chosen are tried in its order while they are taken. Undefined when none.
 */
export async function findPlaced(
  dir: string,
  name: string,
  side: { suffix: string; matches: (content: string) => boolean },
  options: PlaceOptions = {},
): Promise<string | undefined> {
  for (const candidate of numberedNames(fitName(name, reservedBytes([side.suffix], options)))) {
    const placed = path.join(dir, candidate);
    if (!(await existsOrFalse(placed))) return undefined;
    const content = await fs.readFile(`${placed}${side.suffix}`, 'utf8').catch(() => undefined);
    if (content !== undefined && side.matches(content)) return placed;
  }
  return undefined;
}

async function placeInto(
  filePath: string,
  dir: string,
  name: string,
  sideFiles: readonly SideFile[],
  options: PlaceOptions,
): Promise<string> {
  const reserve = reservedBytes(
    sideFiles.map((f) => f.suffix),
    options,
  );
  const target = path.join(dir, await freeName(dir, fitName(name, reserve)));
  for (const suffix of options.markerSuffixes ?? []) {
    const marker = `${filePath}${suffix}`;
    if (await existsOrFalse(marker)) await moveFile(marker, `${target}${suffix}`);
  }
  for (const companion of options.companions ?? []) {
    if (await existsOrFalse(companion)) {
      await moveFile(
        companion,
        path.join(dir, await freeName(dir, fitName(path.basename(companion), reserve))),
      );
    }
  }
  for (const side of sideFiles) await writeFileAtomic(`${target}${side.suffix}`, side.content);
  await moveFile(filePath, target);
  return target;
}
