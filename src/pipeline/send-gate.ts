/**
 * The one door to an irreversible call (a job create: for payload-word the service sends the
 * document at once). A create is made only for an intent the journal holds on disk, and at most
 * once per intent without looking first: an intent is fresh (a FreshIntent, fresh-intents.ts)
 * only between the moment this process recorded it and the moment it sends. Anything else found in `creating` (a crash, a lost
 * answer, an error of our own after the call) may have reached the service, so the job is looked
 * up by its deterministic name, and only a lookup that finds nothing lets the call go out again.
 * With several agents on one journal, the call goes out only right after the file's lease was
 * renewed under its epoch, and is aborted before the lease could run out (docs/high-availability.md).
 */

import { API_ERROR_CODES, ApiError } from '../api/index.js';
import { crashPoint } from '../core/crash-points.js';
import type { Job } from '../domain/wire.js';
import type { JournalItem, TransitionFields } from '../journal/index.js';
import { callOptions } from './call-options.js';
import { inCallSlot } from './call-slots.js';
import type { FreshIntent } from './fresh-intents.js';
import { findJobByName } from './job-lookup.js';
import { classifyFailure } from './retry-policy.js';
import { type FolderRuntime, RetryLater, type SendAllowance, type StepContext } from './types.js';

export type { SendAllowance } from './types.js';

/** Records a new intent (`creating`, a new job name): answers it fresh. */
export async function recordIntent(
  ctx: StepContext,
  itemId: number,
  note?: string,
  fields: Pick<TransitionFields, 'lostAnswer'> = {},
): Promise<FreshIntent> {
  const item = await ctx.journal.transition(itemId, 'creating', {
    ...fields,
    ...(note === undefined ? {} : { note }),
  });
  return ctx.intents.recorded(item);
}

export type SendOutcome<T> = { kind: 'sent'; answer: T } | { kind: 'found'; job: Job };

/**
 * Sends the create of a `creating` item once, or answers the job the service already has under
 * its name. Throws RetryLater when the lookup fails, DOCEX_LEASE_LOST when another agent holds the
 * file now (nothing is sent then); errors of `send` are the caller's to classify, and whatever they
 * are, the intent is spent: the next call looks up. `send` gets what its request must obey (callOptions).
 */
export async function sendOnce<T>(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  send: (jobName: string, allowance: SendAllowance) => Promise<T>,
): Promise<SendOutcome<T>> {
  if (item.state !== 'creating' || !item.jobName) {
    throw new RetryLater('DOCEX_INTERNAL', `item ${item.id} in ${item.state} has no intent to send`);
  }
  if (!ctx.intents.take(item)) {
    let found: Job | undefined;
    try {
      found = await inCallSlot(ctx, runtime, item, () =>
        findJobByName(ctx, item, callOptions(ctx, runtime, item)),
      );
    } catch (err) {
      const outcome = classifyFailure(err, 'create');
      throw new RetryLater(outcome.code, `job lookup by name failed: ${outcome.reason}`);
    }
    if (found) return { kind: 'found', job: found };
    waitIfUnsettled(ctx, item);
  }
  // The intent, and the name to find the job by, are on disk before anything is sent.
  await ctx.journal.flush();
  const jobName = item.jobName;
  // The call's place (call-slots.ts) is taken once the intent is on disk (its fsync is the
  // agent's time, not the service's) and before the lease allowance starts (not spent waiting).
  return inCallSlot(ctx, runtime, item, async () => {
    const allowedMs = await ctx.journal.leaseForSend(item);
    crashPoint('before-create');
    const sentAt = ctx.clock.now();
    let answer: T;
    try {
      answer = await send(jobName, allowance(ctx, allowedMs));
    } catch (err) {
      if (mayBeInService(err)) ctx.intents.sentUnanswered(item, sentAt);
      throw err;
    }
    crashPoint('after-create');
    return { kind: 'sent', answer };
  });
}

/**
 * The request's signal ends with the lease allowance. Its wait for a turn in the pace of the
 * service host is part of the allowance: a turn that comes with less than createMarginMs of it
 * left (or half of it, when the journal gave less than twice that) does not send the create,
 * which would be cut off in flight and leave a job to find by name; it fails as a wait
 * (DOCEX_PACE_TURN_LATE, call-options.ts) and is tried again with a fresh lease.
 */
function allowance(ctx: StepContext, allowedMs: number | undefined): SendAllowance {
  if (allowedMs === undefined) return { signal: ctx.signal };
  const now = ctx.monotonicNow ?? (() => performance.now());
  const from = now();
  return {
    signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(allowedMs)]),
    lease: {
      leftMs: () => allowedMs - (now() - from),
      minLeftMs: Math.min(ctx.createMarginMs ?? 0, allowedMs / 2),
    },
  };
}

/** Failures of the client that no create request ever follows. */
const NOT_SENT: ReadonlySet<string> = new Set([API_ERROR_CODES.authToken, API_ERROR_CODES.invalidArgument]);

/** The request left and no answer came back: a transport failure, a timeout or an abort. */
function mayBeInService(err: unknown): boolean {
  if (err instanceof ApiError) return err.status === undefined && !NOT_SENT.has(err.code);
  const name = (err as { name?: unknown } | undefined)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/**
 * A create this process sent got no answer (a timeout, a reset, the lease's deadline): the service
 * may hold it still, unhandled, so a lookup that finds no job proves nothing until the API's own
 * answer timeout has passed since it was sent. Until then the create waits (DOCEX_CREATE_UNSETTLED).
 */
function waitIfUnsettled(ctx: StepContext, item: JournalItem): void {
  const sentAt = ctx.intents.unansweredSince(item);
  const settleMs = ctx.unansweredSettleMs ?? 0;
  if (sentAt === undefined || ctx.clock.now() - sentAt >= settleMs) return;
  throw new RetryLater(
    'DOCEX_CREATE_UNSETTLED',
    `the create sent at ${new Date(sentAt).toISOString()} got no answer and no job ${item.jobName} is found yet; not sent again before ${new Date(sentAt + settleMs).toISOString()}`,
  );
}
