/**
 * Drives a payload-word file: validate it, cut it into rows (journal child items, all recorded in
 * one transaction before any job is created), create one job per good row, then archive the file.
 * A payload-word job has no upload, so a row whose create answer was lost is found by its name
 * and simply recorded: exactly once without an orphan.
 */

import type { PayloadJobRequest } from '../domain/wire.js';
import { isFinal, type JournalItem } from '../journal/index.js';
import { classifyFailure } from './failures.js';
import { archiveItem, placeRejected, rejectItem } from './finish.js';
import { validateItem } from './intake.js';
import { findJobByName } from './job-lookup.js';
import { callOptions } from './job-steps.js';
import { planPayload } from './payload-plan.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

async function createRow(
  ctx: StepContext,
  rt: FolderRuntime,
  row: JournalItem,
  request: PayloadJobRequest,
  lookUpFirst: boolean,
): Promise<JournalItem> {
  let item = row.state === 'validated' ? ctx.journal.transition(row.id, 'creating') : row;
  const log = ctx.log.child({ folder: item.folder, file: item.fileName, row: item.rowIndex });
  try {
    if (lookUpFirst) {
      const found = await findJobByName(ctx, item, callOptions(ctx, rt, item));
      if (found) {
        log.info({ jobId: found.id }, 'row job found by name');
        item = ctx.journal.transition(item.id, 'created', { jobId: found.id, note: 'job found by name' });
        return ctx.journal.transition(item.id, 'done');
      }
    }
    const created = await ctx.jobs.createPayloadWord(
      { ...request, jobName: item.jobName ?? request.jobName },
      callOptions(ctx, rt, item),
    );
    item = ctx.journal.transition(item.id, 'created', { jobId: created.id });
    log.info({ jobId: created.id }, 'row job created');
    return ctx.journal.transition(item.id, 'done');
  } catch (err) {
    const outcome = classifyFailure(err, 'create');
    if (outcome.kind === 'reject') {
      return ctx.journal.transition(item.id, 'rejected', { code: outcome.code, reason: outcome.reason });
    }
    throw new RetryLater(outcome.code, outcome.reason);
  }
}

export async function drivePayloadWord(
  ctx: StepContext,
  rt: FolderRuntime,
  start: JournalItem,
  options: { rehash?: boolean } = {},
): Promise<JournalItem> {
  let item = start;
  if (item.state === 'claimed') item = await validateItem(ctx, rt, item, options.rehash ?? false);
  if (item.state === 'rejected') {
    await placeRejected(ctx, rt, item);
    return item;
  }
  if (item.state === 'done') return item;
  const plan = await planPayload(ctx, rt, item);
  let rows = ctx.journal.rowsOf(item.id);
  if (!plan.ok) {
    if (rows.length === 0)
      return rejectItem(ctx, rt, item, plan.code, plan.reason, plan.report ? { report: plan.report } : {});
    throw new RetryLater(plan.code, `rows recorded but the file no longer builds: ${plan.reason}`);
  }
  if (rows.length === 0) rows = ctx.journal.addRows(item.id, plan.rows);
  for (const row of rows) {
    if (isFinal(row.state)) continue;
    if (ctx.signal.aborted) throw new RetryLater('DOCEX_STOPPING', 'the agent is stopping');
    const request = plan.byRow.get(row.rowIndex ?? -1);
    if (!request) throw new RetryLater('DOCEX_INTERNAL', `no request for row ${row.rowIndex}`);
    // A row found in `creating` may have reached the service before a crash: look it up first.
    await createRow(ctx, rt, row, request, row.state === 'creating');
  }
  const done = await archiveItem(ctx, rt, item, {
    rows: ctx.journal
      .rowsOf(item.id)
      .map((r) => ({ label: r.label, state: r.state, jobId: r.jobId, reason: r.rejectReason })),
    ...(plan.report ? { report: plan.report } : {}),
  });
  return done;
}
