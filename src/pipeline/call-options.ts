import type { CallOptions } from '../api/index.js';
import type { JournalItem } from '../journal/index.js';
import type { FolderRuntime, StepContext } from './types.js';

/**
 * The API options of an item's calls: the pipeline's signal (or `signal`, a create's, which also
 * ends before the file's lease could), the folder's managed company, its log fields.
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
  };
}

/** The API client's lines for this item carry the same fields as the pipeline's. */
export function itemLog(ctx: StepContext, item: JournalItem) {
  return ctx.log.child({
    folder: item.folder,
    file: item.fileName,
    ...(item.jobId ? { jobId: item.jobId } : {}),
  });
}
