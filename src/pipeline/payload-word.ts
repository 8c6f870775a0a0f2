/**
 * Drives a payload-word file: validate it, cut it into rows (journal child items, all recorded in
 * one transaction before any job is created), create one job per good row, then archive the file.
 * A payload-word job has no upload: the service sends the document as soon as the job exists, so
 * every create goes through the send gate, and a row whose create answer was lost is found by its
 * name and simply recorded: exactly once without an orphan.
 */

import { crashPoint } from '../core/crash-points.js';
import type { PayloadJobRequest } from '../domain/wire.js';
import { isFinal, type JournalItem } from '../journal/index.js';
import { callOptions } from './call-options.js';
import { archiveItem, placeRejected, recordDone, rejectItem } from './finish.js';
import { validateItem } from './intake.js';
import { planPayload } from './payload-plan.js';
import { classifyFailure } from './retry-policy.js';
import { withSendTime } from './send-at.js';
import { recordIntent, type SendOutcome, sendOnce } from './send-gate.js';
import { checkSendWindow } from './send-windows.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

/**
 * One row from wherever the journal has it to `done` or `rejected`. The create goes through the
 * send gate: made once for a fresh intent, and after anything else (a crash, a lost answer, an
 * error of ours after the call) only once a lookup by name found no job.
 */
export async function createRow(
  ctx: StepContext,
  runtime: FolderRuntime,
  row: JournalItem,
  request: PayloadJobRequest,
): Promise<JournalItem> {
  // No job outside the folder's send window: the file waits with its rows recorded.
  if (row.state === 'validated' || row.state === 'creating') checkSendWindow(ctx, runtime);
  let item = row.state === 'validated' ? await recordIntent(ctx, row.id) : row;
  const log = ctx.log.child({ folder: item.folder, file: item.fileName, row: item.rowIndex });
  if (item.state === 'creating') {
    let outcome: SendOutcome<{ id: string }>;
    try {
      outcome = await sendOnce(ctx, runtime, item, (jobName, allowance) =>
        ctx.jobs.createPayloadWord(
          { ...withSendTime(request, runtime, ctx.clock.now()), jobName },
          callOptions(ctx, runtime, item, allowance),
        ),
      );
    } catch (err) {
      if (err instanceof RetryLater) throw err;
      const failure = classifyFailure(err, 'create');
      if (failure.kind === 'reject') {
        return ctx.journal.transition(item.id, 'rejected', { code: failure.code, reason: failure.reason });
      }
      throw new RetryLater(failure.code, failure.reason);
    }
    if (outcome.kind === 'found') {
      log.info({ jobId: outcome.job.id }, 'row job found by name');
      item = await ctx.journal.transition(item.id, 'created', {
        jobId: outcome.job.id,
        note: 'job found by name',
        lostAnswer: 'kept',
      });
    } else {
      item = await ctx.journal.transition(item.id, 'created', { jobId: outcome.answer.id });
      log.info({ jobId: outcome.answer.id }, 'row job created');
    }
    crashPoint('after-created');
  }
  // A payload-word job has no upload: once the service has it, the row is done.
  if (item.state === 'created') item = await recordDone(ctx, item.id);
  return item;
}

export async function drivePayloadWord(
  ctx: StepContext,
  runtime: FolderRuntime,
  start: JournalItem,
  options: { rehash?: boolean } = {},
): Promise<JournalItem> {
  let item = start;
  if (item.state === 'claimed') item = await validateItem(ctx, runtime, item, options.rehash ?? false);
  if (item.state === 'rejected') {
    await placeRejected(ctx, runtime, item);
    return item;
  }
  if (item.state === 'done') return item;
  let rows = await ctx.journal.rowsOf(item.id);
  // Every row final: only the archive is left (a crash after the file's move finds it gone).
  if (rows.length > 0 && rows.every((r) => isFinal(r.state)))
    return archiveRows(ctx, runtime, item, undefined);
  const plan = await planPayload(ctx, runtime, item);
  if (!plan.ok) {
    if (rows.length === 0)
      return rejectItem(
        ctx,
        runtime,
        item,
        plan.code,
        plan.reason,
        plan.report ? { report: plan.report } : {},
      );
    throw new RetryLater(plan.code, `rows recorded but the file no longer builds: ${plan.reason}`);
  }
  if (rows.length === 0) {
    rows = await ctx.journal.addRows(item.id, plan.rows);
    crashPoint('after-rows');
  }
  for (const row of rows) {
    if (isFinal(row.state)) continue;
    if (ctx.signal.aborted) throw new RetryLater('DOCEX_STOPPING', 'the agent is stopping');
    const request = plan.byRow.get(row.rowIndex ?? -1);
    if (!request) throw new RetryLater('DOCEX_INTERNAL', `no request for row ${row.rowIndex}`);
    await createRow(ctx, runtime, row, request);
  }
  return archiveRows(ctx, runtime, item, plan.report);
}

async function archiveRows(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  report: string | undefined,
): Promise<JournalItem> {
  return archiveItem(ctx, runtime, item, {
    rows: (await ctx.journal.rowsOf(item.id)).map((r) => ({
      label: r.label,
      state: r.state,
      jobId: r.jobId,
      ...(r.rejectCode ? { code: r.rejectCode } : {}),
      reason: r.rejectReason,
    })),
    ...(report ? { report } : {}),
  });
}
