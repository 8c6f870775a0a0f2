import { folderPaceKey, type HostPace } from '../api/host-pace.js';
import type { CallOptions } from '../api/index.js';
import type { AttemptPace } from '../api/retry-loop.js';
import { DocexError } from '../core/errors.js';
import type { JournalItem } from '../journal/index.js';
import { companyOf } from './routes.js';
import type { FolderRuntime, SendAllowance, StepContext } from './types.js';

/**
 * The API options of an item's calls: the pipeline's signal (or a create's `allowance`, whose
 * signal also ends before the file's lease could), the item's managed company (decided at its
 * claim; pipeline/routes.ts), its log fields, and the pace of the service host (shared with the
 * return path; the folder's rate under its key).
 */
export function callOptions(
  ctx: StepContext,
  runtime: FolderRuntime,
  item?: JournalItem,
  allowance: SendAllowance = { signal: ctx.signal },
): CallOptions {
  return {
    signal: allowance.signal,
    ...(item ? { log: itemLog(ctx, item) } : {}),
    ...withCompany(item ? companyOf(runtime, item) : runtime.config.managedCompanyId),
    ...(ctx.pace ? { pace: folderPace(ctx.pace, runtime, allowance.lease) } : {}),
  };
}

function withCompany(managedCompanyId: string | undefined) {
  return managedCompanyId ? { managedCompanyId } : {};
}

/** The pace of a folder's calls: the host's, under the folder's own rate (set again if a reload changed it). */
function folderPace(pace: HostPace, runtime: FolderRuntime, lease: SendAllowance['lease']): AttemptPace {
  const key = folderPaceKey(runtime.config.name);
  pace.rateOf(key, runtime.config.rate);
  const attempts = pace.attempts({ caller: 'intake', key });
  return lease ? notLate(attempts, lease) : attempts;
}

/**
 * A create's attempt whose turn came with less of its lease allowance left than it needs is not
 * sent (a request cut off in flight would leave a job to find by name): its place is freed and it
 * fails as a wait, DOCEX_PACE_TURN_LATE, tried again with a fresh lease.
 */
function notLate(attempts: AttemptPace, lease: NonNullable<SendAllowance['lease']>): AttemptPace {
  return {
    begin: async (signal) => {
      const ended = await attempts.begin(signal);
      const leftMs = lease.leftMs();
      if (leftMs >= lease.minLeftMs) return ended;
      ended({ ok: false });
      throw new DocexError(
        'DOCEX_PACE_TURN_LATE',
        `the call's turn in the pace of the service host came with ${Math.max(0, Math.floor(leftMs))} ms of its lease allowance left, less than the ${Math.ceil(lease.minLeftMs)} ms it needs: not sent`,
      );
    },
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
