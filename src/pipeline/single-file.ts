/**
 * Drives one single-file item from whatever state the journal holds to done or rejected:
 * validate, the job steps (create, upload), then archive. Every step starts from the journal, so
 * the same code resumes a file after a crash.
 */
import type { JournalItem } from '../journal/index.js';
import { callOptions } from './call-options.js';
import { archiveItem, placeRejected, rejectItem } from './finish.js';
import { validateItem } from './intake.js';
import { runJobSteps } from './job-steps.js';
import type { FolderRuntime, StepContext } from './types.js';

export async function driveSingleFile(
  ctx: StepContext,
  runtime: FolderRuntime,
  start: JournalItem,
  options: { rehash?: boolean } = {},
): Promise<JournalItem> {
  let item = start;
  const held = options.rehash ? undefined : ctx.held?.get(item.id)?.bytes;
  if (item.state === 'claimed') item = await validateItem(ctx, runtime, item, options.rehash ?? false);
  item = await runJobSteps(ctx, runtime, item, {
    filePath: item.claimedPath ?? '',
    size: item.size,
    mtimeMs: item.mtimeMs,
    sha256: item.sha256,
    bytes: held,
    create: (jobName, allowance) =>
      ctx.jobs.createSingleFile(
        { workflowId: item.workflowId, filename: item.fileName, ...(jobName ? { jobName } : {}) },
        callOptions(ctx, runtime, item, allowance),
      ),
    reject: (it, code, reason, extras) => rejectItem(ctx, runtime, it, code, reason, extras),
  });
  if (item.state === 'uploaded') return archiveItem(ctx, runtime, item);
  if (item.state === 'rejected') await placeRejected(ctx, runtime, item);
  return item;
}
