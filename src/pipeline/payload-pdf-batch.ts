/**
 * Drives a payload-pdf batch: a ZIP of PDFs with index.csv, or (pairing index-csv) an index file
 * dropped in the folder naming PDFs dropped beside it. Validate the batch (inspectFile lists a ZIP
 * safely), build and check every row of the index, record the rows as journal child items in one
 * transaction, then per row create the payload-pdf job and stream its PDF up through the shared
 * job steps. Every row resumes from its journal state, so a crash mid-batch never sends a finished
 * row again. The batch (ZIP, or index + its PDFs) is archived with result.json listing each row's
 * job, or rejected with error.txt listing every bad row.
 *
 * Folder drops: the index is the trigger. The PDFs it names are taken from `.processing/` (where
 * the source claims every file; they are not items of their own) when the index runs; a PDF not
 * there yet is waited for up to BATCH_WAIT_MS after the index was taken, then the batch is rejected
 * with the missing names. A PDF no index names stays in `.processing/` until one does.
 */

import fs, { readFile } from 'node:fs/promises';
import path from 'node:path';
import { crashPoint } from '../core/crash-points.js';
import type { ErrorCode } from '../core/error-codes.js';
import { fileChange, isFinal, type JournalItem } from '../journal/index.js';
import { subFoldersOf } from '../sources/kinds.js';
import { type BatchInput, folderBatchInput, settledBatchInput, zipBatchInput } from './batch-inputs.js';
import { type BatchPlan, planBatch } from './batch-plan.js';
import { callOptions } from './call-options.js';
import { archiveItem, placeRejected, recordDone, rejectItem } from './finish.js';
import { validateItem } from './intake.js';
import { runJobSteps } from './job-steps.js';
import { archiveDayDir } from './outcome-files.js';
import { placeableSubDir } from './place-file.js';
import { workflowOf } from './routes.js';
import { withSendTime } from './send-at.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

/** How long an index waits for the PDFs it names (as a PDF waits for its sidecar). */
export const BATCH_WAIT_MS = 10 * 60_000;

export function isZipBatch(fileName: string): boolean {
  return path.extname(fileName).toLowerCase() === '.zip';
}

/**
 * The index file of a folder drop (pairing index-csv): `index.csv`, or `index.2.csv` when recovery
 * finds it under the numbered name its claim gave it beside an earlier one in `.processing/`.
 */
export function isIndexName(runtime: FolderRuntime, fileName: string): boolean {
  if (runtime.mode !== 'payload-pdf' || runtime.config.payloadPdf.pairing !== 'index-csv') return false;
  const indexFile = runtime.config.payloadPdf.indexFile;
  if (fileName === indexFile) return true;
  const ext = path.extname(indexFile);
  const stem = indexFile.slice(0, indexFile.length - ext.length);
  return (
    fileName.startsWith(`${stem}.`) &&
    fileName.endsWith(ext) &&
    /^\d+$/.test(fileName.slice(stem.length + 1, fileName.length - ext.length))
  );
}

async function rowSummary(ctx: StepContext, item: JournalItem) {
  return (await ctx.journal.rowsOf(item.id)).map((r) => ({
    label: r.label,
    state: r.state,
    jobId: r.jobId,
    ...(r.rejectCode ? { code: r.rejectCode } : {}),
    reason: r.rejectReason,
  }));
}

/** Companions first, then the index or ZIP: a crash in between is finished by the next drive. */
async function rejectBatch(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  input: BatchInput | undefined,
  rejection: {
    code: ErrorCode;
    reason: string;
    report?: string | undefined;
    details?: Record<string, unknown>;
  },
): Promise<JournalItem> {
  await input?.placeCompanions(
    await placeableSubDir(runtime.config.errorDir, subFoldersOf(runtime.config, item)),
  );
  return rejectItem(ctx, runtime, item, rejection.code, rejection.reason, {
    ...(rejection.report ? { report: rejection.report } : {}),
    ...(rejection.details ? { details: rejection.details } : {}),
  });
}

/** Archive when a row was sent; reject when none was (every row rejected, the service's 4xx too). */
async function finishBatch(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  input: BatchInput | undefined,
  report: string | undefined,
): Promise<JournalItem> {
  const rows = await ctx.journal.rowsOf(item.id);
  if (!rows.some((r) => r.state === 'done')) {
    return rejectBatch(ctx, runtime, item, input, {
      code: rows[0]?.rejectCode ?? 'DOCEX_REJECTED',
      reason: 'every row of the batch was refused',
      details: { rows: await rowSummary(ctx, item) },
    });
  }
  await input?.placeCompanions(
    archiveDayDir(runtime.config.archiveDir, ctx.clock.now(), subFoldersOf(runtime.config, item)),
  );
  return archiveItem(ctx, runtime, item, {
    rows: await rowSummary(ctx, item),
    ...(report ? { report } : {}),
  });
}

async function openInput(ctx: StepContext, item: JournalItem): Promise<BatchInput> {
  if (isZipBatch(item.fileName)) return zipBatchInput(item);
  const index = await readFile(item.claimedPath!);
  const built = await ctx.inspector.run('buildBatchIndex', item.fileName, index, {
    workflowId: item.workflowId,
    fileName: item.fileName,
  });
  const names = built.ok ? built.rows.flatMap((r) => (r.file ? [r.file] : [])) : [];
  const input = await folderBatchInput(item, index, names, { keepFiles: ctx.keepFiles === true });
  if (input.pdfFiles.length > 0) {
    ctx.log.debug(
      { folder: item.folder, file: item.fileName, pdfs: input.pdfFiles.length },
      'batch PDFs taken',
    );
  }
  return input;
}

async function sendRows(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  input: BatchInput,
  plan: Extract<BatchPlan, { ok: true }>,
): Promise<void> {
  for (const start of await ctx.journal.rowsOf(item.id)) {
    if (isFinal(start.state)) continue;
    if (ctx.signal.aborted) throw new RetryLater('DOCEX_STOPPING', 'the agent is stopping');
    const target = plan.byRow.get(start.rowIndex ?? -1);
    if (!target) throw new RetryLater('DOCEX_INTERNAL', `no request for row ${start.rowIndex}`);
    const pdfPath = await input.pdfPath(target.file, start.rowIndex ?? 0);
    const st = await fs.stat(pdfPath);
    const request = target.request;
    let row = await runJobSteps(ctx, runtime, start, {
      filePath: pdfPath,
      size: st.size,
      mtimeMs: st.mtimeMs,
      create: (jobName, allowance) =>
        ctx.jobs.createPayloadPdf(
          { ...withSendTime(request, runtime, ctx.clock.now()), ...(jobName ? { jobName } : {}) },
          callOptions(ctx, runtime, start, allowance),
        ),
      reject: async (it, code, reason) => ctx.journal.transition(it.id, 'rejected', { code, reason }),
    });
    if (row.state === 'uploaded') row = await recordDone(ctx, row.id);
    ctx.log.info(
      { folder: item.folder, file: item.fileName, row: row.label, jobId: row.jobId, state: row.state },
      'batch row finished',
    );
    await input.release(pdfPath);
  }
}

/** The index or ZIP changed in `.processing/` after its claim: open rows are rejected, never half-sent. */
async function batchChanged(item: JournalItem): Promise<string | undefined> {
  const st = await fs.stat(item.claimedPath!).catch(() => undefined);
  if (!st) return 'the batch is no longer in .processing';
  const change = fileChange({ size: item.size ?? -1, mtimeMs: item.mtimeMs ?? -1 }, st);
  return change.changed ? `the batch changed after it was taken (${change.what})` : undefined;
}

async function driveRows(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  input: BatchInput,
): Promise<JournalItem> {
  const recorded = await ctx.journal.rowsOf(item.id);
  if (recorded.length === 0 && input.missing.length > 0) {
    const shown = input.missing.map((n) => JSON.stringify(n)).join(', ');
    if (ctx.clock.now() - item.createdAt < BATCH_WAIT_MS) {
      throw new RetryLater('DOCEX_BATCH_PENDING', `waiting for ${input.missing.length} PDF(s) of the batch`);
    }
    return rejectBatch(ctx, runtime, item, input, {
      code: 'DOCEX_INPUT_BATCH_INDEX',
      reason: `${item.fileName} names PDFs that did not arrive in ${BATCH_WAIT_MS / 60_000} minutes: ${shown}`,
      details: { missing: input.missing },
    });
  }
  const columns = runtime.config.mapping?.csv?.columns;
  const built = input.index
    ? await ctx.inspector.run('buildBatchIndex', input.indexName, input.index, {
        workflowId: item.workflowId,
        pdfFiles: input.pdfFiles,
        fileName: input.indexName,
        ...(columns && Object.keys(columns).length > 0 ? { mapping: columns } : {}),
      })
    : undefined;
  const plan = planBatch({
    built,
    workflow: workflowOf(runtime, item.workflowId),
    batchName: item.fileName,
    indexName: input.indexName,
    onInvalidRow: runtime.config.onInvalidRow,
    notBefore: item.createdAt,
  });
  if (!plan.ok) {
    if (recorded.length > 0)
      throw new RetryLater(plan.code, `rows recorded but the batch no longer builds: ${plan.reason}`);
    return rejectBatch(ctx, runtime, item, input, plan);
  }
  if (recorded.length === 0) {
    await ctx.journal.addRows(item.id, plan.rows);
    crashPoint('after-rows');
  }
  await sendRows(ctx, runtime, item, input, plan);
  return finishBatch(ctx, runtime, item, input, plan.report);
}

export async function drivePayloadPdfBatch(
  ctx: StepContext,
  runtime: FolderRuntime,
  start: JournalItem,
  options: { rehash?: boolean } = {},
): Promise<JournalItem> {
  let item = start;
  if (item.state === 'claimed') item = await validateItem(ctx, runtime, item, options.rehash ?? false);
  const leftovers = () =>
    settledBatchInput(item, { zip: isZipBatch(item.fileName), keepFiles: ctx.keepFiles === true });
  if (item.state === 'rejected') {
    await leftovers().placeCompanions(
      await placeableSubDir(runtime.config.errorDir, subFoldersOf(runtime.config, item)),
    );
    await placeRejected(ctx, runtime, item);
    return item;
  }
  if (item.state === 'done') return item;

  const recorded = await ctx.journal.rowsOf(item.id);
  const allFinal = recorded.length > 0 && recorded.every((r) => isFinal(r.state));
  const changed = allFinal ? undefined : await batchChanged(item);
  if (changed) {
    for (const r of recorded) {
      if (!isFinal(r.state))
        await ctx.journal.transition(r.id, 'rejected', { code: 'DOCEX_SOURCE_CHANGED', reason: changed });
    }
    if (recorded.length === 0) {
      return rejectBatch(ctx, runtime, item, leftovers(), { code: 'DOCEX_SOURCE_CHANGED', reason: changed });
    }
  }
  let input: BatchInput | undefined;
  try {
    // All rows final: only the moves are left (a crash after the index's rename finds it gone).
    const settled = recorded.length > 0 && (await ctx.journal.rowsOf(item.id)).every((r) => isFinal(r.state));
    if (settled) {
      return await finishBatch(ctx, runtime, item, leftovers(), undefined);
    }
    try {
      input = await openInput(ctx, item);
    } catch (err) {
      const reason = `${item.fileName} could not be read: ${err instanceof Error ? err.message : String(err)}`;
      if (recorded.length > 0) throw new RetryLater('DOCEX_INPUT_UNREADABLE', reason);
      return await rejectBatch(ctx, runtime, item, undefined, { code: 'DOCEX_INPUT_UNREADABLE', reason });
    }
    return await driveRows(ctx, runtime, item, input);
  } finally {
    input?.close();
  }
}
