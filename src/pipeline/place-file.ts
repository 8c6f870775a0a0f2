/**
 * Moves a claimed file out of `.processing/` into its archive or error folder. The side files are
 * written first and the data file renamed last: a crash in between leaves the file in
 * `.processing/`, where recovery places it again under the same free name (nothing is deleted).
 */
import { constants as fsc } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { ensureDir, freeName } from '../sources/local/claim.js';
import { writeFileAtomic } from './outcome-files.js';

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
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}

/** rename, or across filesystems copy + fsync + rename + unlink (a crash leaves a copy, never a loss). */
async function moveTo(from: string, to: string): Promise<void> {
  try {
    await fs.rename(from, to);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') {
      throw new DocexError('DOCEX_PLACE_FAILED', `could not move ${path.basename(from)}`, {
        cause: err,
        details: { file: path.basename(from), dir: path.dirname(to) },
      });
    }
  }
  const temp = path.join(path.dirname(to), `.${path.basename(to)}.copy.tmp`);
  await fs.copyFile(from, temp, fsc.COPYFILE_FICLONE);
  const handle = await fs.open(temp, 'r+');
  await handle.sync().finally(() => handle.close());
  await fs.rename(temp, to);
  await fs.unlink(from);
}

/**
 * Places `filePath` as `dir/name` (or `dir/stem.2.ext` when taken) with its side files beside it.
 * Answers the placed path.
 */
export async function placeFile(
  filePath: string,
  dir: string,
  name: string,
  sideFiles: readonly SideFile[],
  options: PlaceOptions = {},
): Promise<string> {
  await ensureDir(dir);
  const target = path.join(dir, await freeName(dir, name));
  for (const suffix of options.markerSuffixes ?? []) {
    const marker = `${filePath}${suffix}`;
    if (await exists(marker)) await moveTo(marker, `${target}${suffix}`);
  }
  for (const companion of options.companions ?? []) {
    if (await exists(companion)) {
      await moveTo(companion, path.join(dir, await freeName(dir, path.basename(companion))));
    }
  }
  for (const side of sideFiles) await writeFileAtomic(`${target}${side.suffix}`, side.content);
  await moveTo(filePath, target);
  return target;
}
