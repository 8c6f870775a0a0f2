/**
 * A folder's send time (`sendAt`) on a payload job: the request carries the execution date the
 * rule gives at the moment of its create (the next such time, or a fixed delay after it), unless
 * the row brought its own. Computed right before each create, so a file held by its send window
 * or by retries still gets a date ahead of its job.
 */
import { isoTime } from '../core/clock.js';
import { nextSendTime } from '../core/send-window.js';
import type { PayloadJobRequest } from '../domain/wire.js';
import type { FolderRuntime } from './types.js';

export function withSendTime(
  request: PayloadJobRequest,
  runtime: FolderRuntime,
  now: number,
): PayloadJobRequest {
  const rule = runtime.config.sendAt;
  if (!rule || request.sendingEventExecutionDateUtc !== undefined) return request;
  return { ...request, sendingEventExecutionDateUtc: isoTime(nextSendTime(rule, now)) };
}
