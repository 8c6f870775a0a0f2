import { folderPaceKey, type HostPace } from '../api/host-pace.js';
import type { CallOptions } from '../api/index.js';
import type { JournalItem } from '../journal/index.js';
import type { FolderRuntime, StepContext } from './types.js';

/**
 * The API options of an item's calls: the pipeline's signal (or `signal`, a create's, which also
 * ends before the file's lease could), the folder's managed company, its log fields, and the pace
 * of the service host (shared with the return path; the folder's rate under its key).
 */
export function callOptions(
  ctx: StepContext,
  runtime: FolderRuntime,
  item?: JournalItem,
  signal: AbortSignal = ctx.signal,
): CallOptions {
  return {
    signal,
    ...(item ? { log: itemLog(ctx, item) } : {}),
    ...(runtime.config.managedCompanyId ? { managedCompanyId: runtime.config.managedCompanyId } : {}),
    ...(ctx.pace ? { pace: folderPace(ctx.pace, runtime) } : {}),
  };
}

/** The pace of a folder's calls: the host's, under the folder's own rate (set again if a reload changed it). */
function folderPace(pace: HostPace, runtime: FolderRuntime) {
  const key = folderPaceKey(runtime.config.name);
  pace.rateOf(key, runtime.config.rate);
  return pace.attempts({ caller: 'intake', key });
}

/** The API client's lines for this item carry the same fields as the pipeline's. */
export function itemLog(ctx: StepContext, item: JournalItem) {
  return ctx.log.child({
    folder: item.folder,
    file: item.fileName,
    ...(item.jobId ? { jobId: item.jobId } : {}),
  });
}
