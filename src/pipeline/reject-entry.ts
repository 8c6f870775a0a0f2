/**
 * A drop-folder entry rejected before it became a file of the pipeline: a symbolic link, a special
 * file (FIFO, socket, device) or a name that is not UTF-8. It is never opened or followed, so it has no content, no
 * hash and no journal item; it is renamed as it is into the error folder with the same records
 * beside it as a rejected file. A crash in between leaves it in the drop folder, rejected again at
 * the next look: nothing was sent, so nothing can be doubled.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { freeName, writeFileAtomic } from '../core/fs.js';
import { assertRealPath, ensureRealDir } from '../core/real-dir.js';
import type { RejectedEntry } from '../sources/local/index.js';
import { fitName, placeableSubDir, placingInto } from './place-file.js';

export interface EntryRejection {
  folder: string;
  workflowId: string;
  errorDir: string;
  now: number;
}

/** An entry of a recursive folder's sub-folder keeps its sub-path (`error/acme/invoices/`). */
export async function rejectEntry(entry: RejectedEntry, to: EntryRejection): Promise<string> {
  const dir = await placeableSubDir(to.errorDir, entry.subFolders ?? []);
  // Every level checked before the sub-folders are made, and again after: none is a link.
  await assertRealPath(to.errorDir, dir);
  await ensureRealDir(dir);
  await assertRealPath(to.errorDir, dir);
  return placingInto(dir, () => placeRejectedEntry(entry, to, dir));
}

async function placeRejectedEntry(entry: RejectedEntry, to: EntryRejection, dir: string): Promise<string> {
  const placed = path.join(dir, await freeName(dir, fitName(entry.name, 11)));
  const record = {
    status: 'rejected',
    file: entry.name,
    folder: to.folder,
    workflowId: to.workflowId,
    code: entry.code,
    reason: entry.reason,
    rejectedAt: new Date(to.now).toISOString(),
  };
  const text = [
    `${entry.name} was not sent.`,
    '',
    `Reason: ${entry.reason}`,
    `Code:   ${entry.code}`,
    `Folder: ${to.folder} (workflow ${to.workflowId})`,
    `Refused at: ${record.rejectedAt}`,
    '',
    entry.fix,
  ].join('\n');
  await writeFileAtomic(`${placed}.error.json`, `${JSON.stringify(record, null, 2)}\n`);
  await writeFileAtomic(`${placed}.error.txt`, `${text}\n`);
  try {
    // rename moves the link or the FIFO itself; a copy (across file systems) would read through it.
    await fs.rename(entry.path, placed);
  } catch (err) {
    await Promise.all([
      fs.rm(`${placed}.error.json`, { force: true }),
      fs.rm(`${placed}.error.txt`, { force: true }),
    ]);
    throw new DocexError('DOCEX_PLACE_FAILED', `could not move ${entry.name} to the error folder`, {
      cause: err,
      details: { file: entry.name, dir },
    });
  }
  return placed;
}
