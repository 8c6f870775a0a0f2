/**
 * The last step of every file: a done file goes to `archive/YYYY-MM-DD/` with its result record,
 * a rejected one to the error folder with an error record and an operator's text. The journal's
 * state decides which; a file already moved (crash after the rename) is left alone.
 */

import fs from 'node:fs/promises';
import { crashPoint } from '../core/crash-points.js';
import type { ErrorCode } from '../core/error-codes.js';
import { existsOrFalse } from '../core/fs.js';
import type { JournalItem, TransitionFields } from '../journal/index.js';
import { archiveDayDir, errorRecord, errorText, type ResultRecord, resultRecord } from './outcome-files.js';
import { findPlaced, placeFile } from './place-file.js';
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
function archiveDaysSince(archiveDir: string, since: number, now: number): string[] {
  const days = new Set<string>();
  for (let at = Math.max(since, now - 7 * DAY_MS); at < now + DAY_MS; at += DAY_MS) {
    days.add(archiveDayDir(archiveDir, Math.min(at, now)));
  }
  return [...days];
}

/**
 * A spool copy of a file another agent held before (an epoch past the first): that agent may have
 * archived its own copy and died before recording `done`. Answers where it did, if it did.
 */
async function archivedByEarlierHolder(
  runtime: FolderRuntime,
  item: JournalItem,
  now: number,
): Promise<string | undefined> {
  if (runtime.config.source.type !== 'sftp' || item.epoch <= 1) return undefined;
  const mine = resultRecord(item, now);
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
  for (const day of archiveDaysSince(runtime.config.archiveDir, item.updatedAt, now)) {
    const placed = await findPlaced(
      day,
      item.fileName,
      { suffix: '.result.json', matches: sameItem },
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

/**
 * Before a spool copy is placed: the copy is this agent's own, so an agent frozen past its lease
 * would place it although the agent that took the file over placed its own copy meanwhile. The
 * lease is renewed first, or nothing is placed (DOCEX_LEASE_LOST). A shared local folder's file is
 * one file, its move the claim: no check needed.
 */
async function renewBeforePlacing(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
): Promise<void> {
  if (runtime.config.source.type === 'sftp') await ctx.journal.leaseForSend(item);
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
    await renewBeforePlacing(ctx, runtime, item);
    const now = ctx.clock.now();
    const earlier = await archivedByEarlierHolder(runtime, item, now);
    if (earlier) {
      await dropCopy(runtime, item);
      log.info(
        { archived: earlier },
        'file archived already by the agent that held it before: this copy dropped',
      );
      return recordDone(ctx, item.id);
    }
    const record = { ...resultRecord(item, now), ...extra };
    const placed = await placeFile(
      item.claimedPath!,
      archiveDayDir(runtime.config.archiveDir, now),
      item.fileName,
      [{ suffix: '.result.json', content: `${JSON.stringify(record, null, 2)}\n` }],
      {
        markerSuffixes: markerSuffixes(runtime),
        companions: companions(runtime, item),
        root: runtime.config.archiveDir,
      },
    );
    log.info({ archived: placed }, 'file archived');
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
  await renewBeforePlacing(ctx, runtime, item);
  const record = errorRecord(item, ctx.clock.now(), extras.details);
  const placed = await placeFile(
    item.claimedPath!,
    runtime.config.errorDir,
    item.fileName,
    [
      { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
      { suffix: '.error.txt', content: errorText(record, extras.report, extras.headline) },
      ...(extras.sideFiles ?? []),
    ],
    {
      markerSuffixes: markerSuffixes(runtime),
      companions: companions(runtime, item),
      root: runtime.config.errorDir,
    },
  );
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
