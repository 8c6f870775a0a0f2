import type { CallOptions } from '../api/index.js';
import type { JournalItem } from '../journal/index.js';
import type { FolderRuntime, StepContext } from './types.js';

/** The API options of an item's calls: the pipeline's signal, the folder's managed company, its log fields. */
export function callOptions(ctx: StepContext, runtime: FolderRuntime, item?: JournalItem): CallOptions {
  return {
    signal: ctx.signal,
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
