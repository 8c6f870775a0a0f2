/**
 * The last step of every file: a done file goes to `archive/YYYY-MM-DD/` with its result record,
 * a rejected one to the error folder with an error record and an operator's text. The journal's
 * state decides which; a file already moved (crash after the rename) is left alone.
 */

import fs from 'node:fs/promises';
import path from 'node:path';
import { crashPoint } from '../core/crash-points.js';
import type { ErrorCode } from '../core/error-codes.js';
import { existsOrFalse } from '../core/fs.js';
import type { JournalItem, TransitionFields } from '../journal/index.js';
import { intakeOf, kindOf, subFoldersOf } from '../sources/kinds.js';
import { PROCESSING_DIR, removeEmptiedClaimDirs } from '../sources/local/index.js';
import { archiveDayDir, errorRecord, errorText, type ResultRecord, resultRecord } from './outcome-files.js';
import { findPlaced, placeableSubDir, placeFileInQueue, placingInto, type SideFile } from './place-file.js';
import { sidecarPathOf, usesSidecars } from './sidecar.js';
import type { FolderRuntime, StepContext } from './types.js';

const DAY_MS = 86_400_000;

/** Payload files: what became of each row, and the report of rejected rows. */
export interface ResultExtras {
  rows?: {
    label: string | undefined;
    state: string;
    jobId: string | undefined;
    /** The code a rejected row was rejected with. */
    code?: string | undefined;
    reason: string | undefined;
  }[];
  report?: string;
}

export interface RejectionExtras {
  details?: Record<string, unknown>;
  /** A longer report (the bad rows of a payload file) for the .error.txt. */
  report?: string;
  /** The .error.txt's first line, when "was not sent" is not the whole truth (a parked file). */
  headline?: string;
  /** More files beside the error record (a parked file's rows not sent). */
  sideFiles?: { suffix: string; content: string }[];
}

function companions(runtime: FolderRuntime, item: JournalItem): string[] {
  return usesSidecars(runtime) && item.claimedPath ? [sidecarPathOf(runtime, item.claimedPath)] : [];
}

function markerSuffixes(runtime: FolderRuntime | undefined): readonly string[] {
  const stability = runtime?.config.stability;
  return stability?.kind === 'done-marker' ? stability.suffixes : [];
}

async function stillClaimed(item: JournalItem): Promise<boolean> {
  if (!item.claimedPath) return false;
  return existsOrFalse(item.claimedPath);
}

/** Days an earlier holder may have archived the item on: from its last move up to now, a week at most. */
function archiveDaysSince(
  archiveDir: string,
  subFolders: readonly string[],
  since: number,
  now: number,
): string[] {
  const days = new Set<string>();
  for (let at = Math.max(since, now - 7 * DAY_MS); at < now + DAY_MS; at += DAY_MS) {
    days.add(archiveDayDir(archiveDir, Math.min(at, now), subFolders));
  }
  return [...days];
}

/**
 * Where an agent that held the file before placed its own copy into one of `dirs` (a spool copy of
 * an SFTP folder's file, an epoch past the first), if it did: it may have died before recording so.
 */
async function placedByEarlierHolder(
  runtime: FolderRuntime,
  item: JournalItem,
  dirs: readonly string[],
  suffix: string,
): Promise<string | undefined> {
  if (!kindOf(runtime.config.source).remote || item.epoch <= 1) return undefined;
  const mine = resultRecord(item, item.createdAt);
  const sameItem = (content: string) => {
    try {
      const record = JSON.parse(content) as Partial<ResultRecord>;
      return (
        record.folder === mine.folder &&
        record.file === mine.file &&
        record.sha256 === mine.sha256 &&
        record.claimedAt === mine.claimedAt
      );
    } catch {
      return false;
    }
  };
  for (const dir of dirs) {
    const placed = await findPlaced(
      dir,
      item.fileName,
      { suffix, matches: sameItem },
      { markerSuffixes: markerSuffixes(runtime) },
    );
    if (placed) return placed;
  }
  return undefined;
}

/** This agent's copy of a file archived already, with what travels with it. */
async function dropCopy(runtime: FolderRuntime, item: JournalItem): Promise<void> {
  const copy = item.claimedPath!;
  const paths = [copy, ...companions(runtime, item), ...markerSuffixes(runtime).map((s) => `${copy}${s}`)];
  await Promise.all(paths.map((p) => fs.rm(p, { force: true })));
}

/**
 * Records an item `done`; one with a job is told to the return path of this process (onJobDone),
 * whose follower then reads the journal rather than at its next look.
 */
export async function recordDone(
  ctx: Pick<StepContext, 'journal' | 'onJobDone'>,
  itemId: number,
  fields?: TransitionFields,
): Promise<JournalItem> {
  const done = await ctx.journal.transition(itemId, 'done', fields);
  if (done.jobId !== undefined) ctx.onJobDone?.();
  return done;
}

interface OwnPlacement {
  dir: string;
  /** The configured folder `dir` lies in. */
  root: string;
  sideFiles: SideFile[];
  /** Where an earlier holder may have placed its copy, and the side file that names the item. */
  earlier: { dirs: readonly string[]; suffix: string };
}

/**
 * Places this agent's copy of the item's file (placeFile), or drops it when an agent that held the
 * file before placed its own already. An SFTP folder's copy is this agent's own: it is placed only
 * while this agent holds the file and no other agent places a copy of it (journal.placeAlone), so
 * an agent frozen mid-placement and the one that took the file over never both place one. A shared
 * local folder's file is one file, its move the claim: no check needed.
 */
async function placeOwnCopy(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  placement: OwnPlacement,
): Promise<{ placed: string } | { earlier: string }> {
  const place = async () => {
    const earlier = await placedByEarlierHolder(
      runtime,
      item,
      placement.earlier.dirs,
      placement.earlier.suffix,
    );
    if (earlier) {
      await dropCopy(runtime, item);
      return { earlier };
    }
    const placed = await placeFileInQueue(
      item.claimedPath!,
      placement.dir,
      item.fileName,
      placement.sideFiles,
      {
        markerSuffixes: markerSuffixes(runtime),
        companions: companions(runtime, item),
        root: placement.root,
      },
    );
    return { placed };
  };
  const outcome = await placingInto(placement.dir, () =>
    kindOf(runtime.config.source).remote ? ctx.journal.placeAlone(item, place) : place(),
  );
  await leftProcessing(runtime, item);
  return outcome;
}

/**
 * A claimed file left `.processing/` (a local folder's, an SFTP folder's spool): the sub-folders of
 * it that it left empty go (claim.ts). A download into one being removed makes it again (sftp source).
 */
async function leftProcessing(runtime: FolderRuntime, item: JournalItem): Promise<void> {
  if (item.claimedPath === undefined) return;
  await removeEmptiedClaimDirs(path.join(intakeOf(runtime.config).dir, PROCESSING_DIR), item.claimedPath);
}

/** `uploaded` (or a `created` payload-word file): archive the file, then record `done`. */
export async function archiveItem(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  extra: ResultExtras = {},
): Promise<JournalItem> {
  const log = ctx.log.child({ folder: item.folder, file: item.fileName, jobId: item.jobId });
  if (ctx.keepFiles) {
    log.debug({ itemId: item.id }, 'file kept in place');
  } else if (await stillClaimed(item)) {
    const now = ctx.clock.now();
    const record = { ...resultRecord(item, now), ...extra };
    const sub = subFoldersOf(runtime.config, item);
    const outcome = await placeOwnCopy(ctx, runtime, item, {
      dir: archiveDayDir(runtime.config.archiveDir, now, sub),
      root: runtime.config.archiveDir,
      sideFiles: [{ suffix: '.result.json', content: `${JSON.stringify(record, null, 2)}\n` }],
      earlier: {
        dirs: archiveDaysSince(runtime.config.archiveDir, sub, item.updatedAt, now),
        suffix: '.result.json',
      },
    });
    if ('earlier' in outcome) {
      log.info(
        { archived: outcome.earlier },
        'file archived already by the agent that held it before: this copy dropped',
      );
      return recordDone(ctx, item.id);
    }
    log.info({ archived: outcome.placed }, 'file archived');
    crashPoint('mid-archive');
  } else {
    log.warn({ itemId: item.id }, 'file already moved out of .processing');
  }
  return recordDone(ctx, item.id);
}

/** A `rejected` item whose file is still in `.processing/`: move it to the error folder. */
export async function placeRejected(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  extras: RejectionExtras = {},
): Promise<void> {
  const log = ctx.log.child({ folder: item.folder, file: item.fileName, jobId: item.jobId });
  if (ctx.keepFiles || !(await stillClaimed(item))) return;
  const record = errorRecord(item, ctx.clock.now(), extras.details);
  const dir = await placeableSubDir(runtime.config.errorDir, subFoldersOf(runtime.config, item));
  const outcome = await placeOwnCopy(ctx, runtime, item, {
    dir,
    root: runtime.config.errorDir,
    sideFiles: [
      { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
      { suffix: '.error.txt', content: errorText(record, extras.report, extras.headline) },
      ...(extras.sideFiles ?? []),
    ],
    earlier: { dirs: [dir], suffix: '.error.json' },
  });
  if ('earlier' in outcome) {
    log.info(
      { placed: outcome.earlier },
      'file refused already by the agent that held it before: this copy dropped',
    );
    return;
  }
  const placed = outcome.placed;
  log.warn({ code: record.code, reason: record.reason, placed }, 'file refused');
}

/** Records the rejection (one transaction), then moves the file; recovery finishes a crash in between. */
export async function rejectItem(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  code: ErrorCode,
  reason: string,
  extras: RejectionExtras = {},
): Promise<JournalItem> {
  const rejected = await ctx.journal.transition(item.id, 'rejected', { code, reason });
  await placeRejected(ctx, runtime, rejected, extras);
  return rejected;
}
