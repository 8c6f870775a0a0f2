/**
 * The follower's pure core: when a job is polled next, and when it is no longer worth following.
 * Soon after the agent records the job, then less often while nothing changes; a change brings
 * the interval back to its minimum. While webhooks arrive, polling is only the safety net.
 */
import type { FollowConfig } from '../config/returns-schema.js';

export type FollowTiming = Pick<
  FollowConfig,
  'firstPollMs' | 'minIntervalMs' | 'maxIntervalMs' | 'intervalWhileWebhooksMs' | 'maxFollowMs'
>;

export interface PollOutcome {
  now: number;
  /** When the job started to be followed. */
  followedSince: number;
  /** Polls in a row (this one included) that saw nothing change. */
  unchangedPolls: number;
  /** Webhooks arrived recently. */
  webhooksActive: boolean;
}

/** The first poll of a job the agent just recorded. */
export function firstPollAt(recordedAt: number, timing: FollowTiming): number {
  return recordedAt + timing.firstPollMs;
}

/** The interval after a poll: the minimum after a change, doubling with each unchanged poll. */
export function pollInterval(unchangedPolls: number, webhooksActive: boolean, timing: FollowTiming): number {
  const doubled = timing.minIntervalMs * 2 ** Math.min(Math.max(0, unchangedPolls), 30);
  const interval = Math.min(timing.maxIntervalMs, Math.max(timing.minIntervalMs, doubled));
  return webhooksActive ? Math.max(interval, timing.intervalWhileWebhooksMs) : interval;
}

export function nextPollAt(outcome: PollOutcome, timing: FollowTiming): number {
  return outcome.now + pollInterval(outcome.unchangedPolls, outcome.webhooksActive, timing);
}

/** Past maxFollowMs a job is given up (it is logged and marked, never silently dropped). */
export function followExpired(followedSince: number, now: number, timing: FollowTiming): boolean {
  return now - followedSince > timing.maxFollowMs;
}

/** A failed download is tried again after a doubling wait, from the minimum up to the maximum. */
export function retryAt(now: number, failures: number, timing: FollowTiming): number {
  return now + pollInterval(Math.max(0, failures - 1), false, timing);
}
