/**
 * After a crash between sending a create request and recording its answer, the journal knows the
 * job's deterministic name but not its id. This finds the job by that name among the workflow's
 * jobs started since shortly before the intent. The interface has no call that hands out a new
 * upload URL for an existing job, so a found job that still awaits its file cannot be used: the
 * caller records a new attempt and the orphan expires on its own after its upload window.
 */
import type { CallOptions } from '../api/index.js';
import type { Job } from '../domain/wire.js';
import type { JournalItem } from '../journal/index.js';
import type { StepContext } from './types.js';

export async function findJobByName(
  ctx: StepContext,
  item: JournalItem,
  // The create's own options: the same managed company, the item's log fields.
  options: CallOptions,
): Promise<Job | undefined> {
  if (!item.jobName) return undefined;
  const from = new Date(item.updatedAt - ctx.lookupMarginMs);
  for await (const job of ctx.jobs.iterate({ workflowId: item.workflowId, from, pageSize: 200 }, options)) {
    if (job.name === item.jobName) return job;
  }
  return undefined;
}
