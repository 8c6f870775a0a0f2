/**
 * Drives a payload-pdf file (sidecar pairing): validate the PDF, read its sidecar from
 * `.processing/`, check the payload rules locally, record the job as the file's one row, then the
 * shared job steps (create with the payload, upload the PDF) and archive PDF and sidecar together.
 * A PDF whose sidecar has not arrived waits (retried) up to SIDECAR_WAIT_MS, then is rejected.
 * A ZIP is a batch (PDFs + index.csv) in any payload-pdf folder: see payload-pdf-batch.ts.
 */

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { crashPoint } from '../core/crash-points.js';
import type { ErrorCode } from '../core/error-codes.js';
import { DocexError, isDocexError } from '../core/errors.js';
import type { PayloadJobRequest } from '../domain/wire.js';
import { isFinal, type JournalItem } from '../journal/index.js';
import { callOptions } from './call-options.js';
import { archiveItem, placeRejected, recordDone, rejectItem } from './finish.js';
import { mib } from './inspect/codes.js';
import { validateItem } from './intake.js';
import { runJobSteps } from './job-steps.js';
import { checkRows, formatRowReport, sharedCode } from './payload/index.js';
import { drivePayloadPdfBatch, isIndexName, isZipBatch } from './payload-pdf-batch.js';
import { workflowOf } from './routes.js';
import { withSendTime } from './send-at.js';
import { sidecarPathOf } from './sidecar.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

export const SIDECAR_WAIT_MS = 10 * 60_000;

type SidecarPlan =
  | { ok: true; request: PayloadJobRequest; sidecarName: string }
  | { ok: false; code: ErrorCode; reason: string; report?: string }
  | { ok: 'wait' };

/**
 * A regular file of at most `maxBytes`, read from one descriptor opened without following links:
 * a sidecar that is a link (to the client key) or that grows to 200 MB is never read whole.
 */
async function readSmallFile(filePath: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const st = await handle.stat();
    if (!st.isFile())
      throw new DocexError('DOCEX_INPUT_NOT_A_FILE', `${path.basename(filePath)} is not a regular file`);
    if (st.size > maxBytes) throw new DocexError('DOCEX_INPUT_TOO_COMPLEX', 'sidecar over its size limit');
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) throw new DocexError('DOCEX_INPUT_TOO_COMPLEX', 'sidecar over its size limit');
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function readSidecar(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
): Promise<SidecarPlan> {
  const sidecarPath = sidecarPathOf(runtime, item.claimedPath!);
  const sidecarName = path.basename(sidecarPath);
  const maxBytes = ctx.inspector.limits.limits.sidecarBytes;
  let bytes: Buffer;
  try {
    bytes = await readSmallFile(sidecarPath, maxBytes);
  } catch (err) {
    if (isDocexError(err, 'DOCEX_INPUT_TOO_COMPLEX')) {
      return {
        ok: false,
        code: err.code,
        reason: `${sidecarName} is larger than ${mib(maxBytes)} (inspection.limits.sidecarBytes); nothing was sent`,
      };
    }
    if (ctx.clock.now() - item.createdAt < SIDECAR_WAIT_MS) return { ok: 'wait' };
    return {
      ok: false,
      code: 'DOCEX_INPUT_SIDECAR_MISSING',
      reason: `${JSON.stringify(item.fileName)} has no ${sidecarName} beside it; drop the payload file with the PDF`,
    };
  }
  const built = await ctx.inspector.run('buildSidecar', sidecarName, item.fileName, bytes, {
    workflowId: item.workflowId,
    sidecarName,
  });
  if (!built.ok) return { ok: false, code: built.code, reason: built.reason };
  const check = checkRows(built.rows, workflowOf(runtime, item.workflowId), 'payload-pdf', 'reject-file', {
    notBefore: item.createdAt,
  });
  const accepted = check.accepted[0];
  if (check.fileRejected || !accepted) {
    return {
      ok: false,
      code: sharedCode(check.rejected, 'DOCEX_INPUT_ROWS_INVALID'),
      reason: `${sidecarName} breaks the payload rules; nothing was sent`,
      report: formatRowReport(check.rejected, {
        fileName: sidecarName,
        unit: built.unit,
        fileRejected: true,
      }),
    };
  }
  return { ok: true, request: accepted.request, sidecarName };
}

/** Why a file is rejected: sidecar folders take PDFs; index-csv folders an index with its PDFs, or ZIPs. */
function looseFileRejection(runtime: FolderRuntime, fileName: string): string | undefined {
  const name = JSON.stringify(fileName);
  if (runtime.config.payloadPdf.pairing === 'index-csv') {
    return `${name}: this payload-pdf folder (pairing index-csv) takes PDFs named by a ${runtime.config.payloadPdf.indexFile} dropped with them, or one ZIP holding the PDFs and their index.csv`;
  }
  if (path.extname(fileName).toLowerCase() === '.pdf') return undefined;
  return `${name}: a payload-pdf folder with sidecars takes PDFs, each with its ${runtime.config.payloadPdf.sidecarExtension} beside it, or a ZIP batch with an index.csv`;
}

export async function drivePayloadPdf(
  ctx: StepContext,
  runtime: FolderRuntime,
  start: JournalItem,
  options: { rehash?: boolean } = {},
): Promise<JournalItem> {
  // Batches: a ZIP (PDFs + index.csv) in any payload-pdf folder, or the index file of a folder drop.
  if (isZipBatch(start.fileName) || isIndexName(runtime, start.fileName)) {
    return drivePayloadPdfBatch(ctx, runtime, start, options);
  }
  let item = start;
  if (item.state === 'claimed') {
    const wrong = looseFileRejection(runtime, item.fileName);
    if (wrong) return rejectItem(ctx, runtime, item, 'DOCEX_INPUT_WRONG_FOR_WORKFLOW', wrong);
    item = await validateItem(ctx, runtime, item, options.rehash ?? false);
  }
  if (item.state === 'rejected') {
    await placeRejected(ctx, runtime, item);
    return item;
  }
  if (item.state === 'done') return item;

  let rows = await ctx.journal.rowsOf(item.id);
  let row = rows[0];
  // A final row needs no sidecar: only the moves are left (a crash after them finds it gone).
  if (row === undefined || !isFinal(row.state)) {
    const plan = await readSidecar(ctx, runtime, item);
    if (plan.ok === 'wait') throw new RetryLater('DOCEX_SIDECAR_PENDING', 'waiting for the sidecar');
    if (!plan.ok) {
      if (rows.length > 0)
        throw new RetryLater(plan.code, `row recorded but the sidecar no longer builds: ${plan.reason}`);
      return rejectItem(
        ctx,
        runtime,
        item,
        plan.code,
        plan.reason,
        plan.report ? { report: plan.report } : {},
      );
    }
    if (rows.length === 0) {
      rows = await ctx.journal.addRows(item.id, [{ rowIndex: 0, label: plan.sidecarName }]);
      crashPoint('after-rows');
    }
    row = rows[0]!;
    const request = plan.request;
    row = await runJobSteps(ctx, runtime, row, {
      filePath: item.claimedPath!,
      size: item.size,
      mtimeMs: item.mtimeMs,
      sha256: item.sha256,
      create: (jobName, allowance) =>
        ctx.jobs.createPayloadPdf(
          { ...withSendTime(request, runtime, ctx.clock.now()), ...(jobName ? { jobName } : {}) },
          callOptions(ctx, runtime, item, allowance),
        ),
      reject: async (it, code, reason) => ctx.journal.transition(it.id, 'rejected', { code, reason }),
    });
    if (row.state === 'uploaded') row = await recordDone(ctx, row.id);
  }
  if (row.state === 'rejected') {
    return rejectItem(
      ctx,
      runtime,
      item,
      row.rejectCode ?? 'DOCEX_REJECTED',
      row.rejectReason ?? 'the job was refused',
    );
  }
  return archiveItem(ctx, runtime, item, {
    rows: [{ label: row.label, state: row.state, jobId: row.jobId, reason: row.rejectReason }],
  });
}
