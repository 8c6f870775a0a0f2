/**
 * Where a payload-pdf batch's index and PDFs come from: a ZIP (read in place, each PDF extracted
 * to a temp file for its upload, then deleted) or a folder drop (the index file claimed like any
 * file; the PDFs it names are taken from `.processing/` into the batch's own folder, so a later
 * batch with the same names never sees them, and they travel with the index to archive or error).
 * Both keep their per-batch files in `.processing/.batch-<item id>/`: a folder, so recovery's scan
 * of `.processing/` never takes it for a drop.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { isPlainFile } from '../core/fs.js';
import { ensureRealDir } from '../core/real-dir.js';
import type { JournalItem } from '../journal/index.js';
import { BATCH_INDEX_NAME, type OpenBatch, openBatchZip } from './batch-zip.js';
import { placeFile } from './place-file.js';

export interface BatchInput {
  /** The index's name in reasons. */
  indexName: string;
  index: Buffer | undefined;
  /** The PDFs the batch holds (ZIP entries, or the named files found so far). */
  pdfFiles: string[];
  /** Named by the index but not (yet) beside it: folder drops only. */
  missing: string[];
  /** A row's PDF as a plain file to upload. */
  pdfPath(file: string, rowIndex: number): Promise<string>;
  /** The upload of that file is over (temp copies are deleted; dropped PDFs stay). */
  release(filePath: string): Promise<void>;
  /** Moves the batch's own files (dropped PDFs) into `dir`, before the index is placed. */
  placeCompanions(dir: string): Promise<void>;
  close(): void;
}

export function batchDirOf(item: JournalItem): string {
  return path.join(path.dirname(item.claimedPath!), `.batch-${item.id}`);
}

export async function zipBatchInput(item: JournalItem): Promise<BatchInput> {
  const dir = batchDirOf(item);
  const zip: OpenBatch = await openBatchZip(item.claimedPath!);
  return {
    indexName: BATCH_INDEX_NAME,
    index: zip.index,
    pdfFiles: zip.pdfEntries,
    missing: [],
    async pdfPath(file, rowIndex) {
      await ensureRealDir(dir, 0o700);
      const target = path.join(dir, `${rowIndex}.pdf`);
      await zip.extract(file, target);
      return target;
    },
    release: (filePath) => fs.rm(filePath, { force: true }),
    // Extracted copies are the agent's own temp files: removed, never archived.
    placeCompanions: () => fs.rm(dir, { recursive: true, force: true }),
    close: () => zip.close(),
  };
}

/** Names a folder drop can hold: a plain file name, no folder part. */
const plainName = (name: string) => name !== '' && path.basename(name) === name && !name.startsWith('.');

/**
 * Folder drop: `names` are the files the index names. Each found in `.processing/` is moved into
 * the batch folder now (it belongs to this batch from here on); the rest are `missing`.
 */
export async function folderBatchInput(
  item: JournalItem,
  index: Buffer,
  names: readonly string[],
  options: { keepFiles: boolean },
): Promise<BatchInput> {
  const processing = path.dirname(item.claimedPath!);
  // One-shot submit (keepFiles): the PDFs are read where they are and never moved.
  const dir = options.keepFiles ? processing : batchDirOf(item);
  if (!options.keepFiles) await ensureRealDir(dir, 0o700);
  const found: string[] = [];
  const missing: string[] = [];
  for (const name of new Set(names)) {
    if (!plainName(name)) {
      missing.push(name);
      continue;
    }
    const own = path.join(dir, name);
    if (!(await isPlainFile(own))) {
      if (!(await isPlainFile(path.join(processing, name)))) {
        missing.push(name);
        continue;
      }
      await fs.rename(path.join(processing, name), own);
    }
    found.push(name);
  }
  return {
    indexName: item.fileName,
    index,
    pdfFiles: found,
    missing,
    pdfPath: async (file) => path.join(dir, file),
    release: async () => {},
    placeCompanions: (target) => (options.keepFiles ? Promise.resolve() : placeBatchDir(item, target)),
    close: () => {},
  };
}

/** The dropped PDFs a folder batch took, moved beside its index (a ZIP's temp copies are deleted). */
async function placeBatchDir(item: JournalItem, target: string): Promise<void> {
  const dir = batchDirOf(item);
  const left = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of left.sort()) await placeFile(path.join(dir, name), target, name, []);
  await fs.rmdir(dir).catch(() => {});
}

/** A batch whose rows are all final: only its own files are left to move (after a crash, maybe none). */
export function settledBatchInput(
  item: JournalItem,
  options: { zip: boolean; keepFiles: boolean },
): BatchInput {
  const dir = batchDirOf(item);
  return {
    indexName: item.fileName,
    index: undefined,
    pdfFiles: [],
    missing: [],
    pdfPath: async () => {
      throw new DocexError('DOCEX_INTERNAL', 'a settled batch sends nothing');
    },
    release: async () => {},
    placeCompanions: async (target) => {
      if (options.zip) await fs.rm(dir, { recursive: true, force: true });
      else if (!options.keepFiles) await placeBatchDir(item, target);
    },
    close: () => {},
  };
}
