/**
 * One poll's decisions, pure: events and stored state in, decisions out. What the job's stored row
 * says before any call (given up, or asked for again), what a page of events changes (the records
 * to keep, the events newly final, the documents wanted, whether the page is settled), and the
 * job's row after the last page (the settle rule: done, and the next poll time). poll-job.ts is the
 * shell that calls the service and the store; proof names come from proof-names.ts.
 */
import type { ReturnsConfig } from '../config/returns-schema.js';
import {
  isFinalSendingEvent,
  type Job,
  normaliseJobStatus,
  type SendingEvent,
  type SendingEventDocument,
} from '../domain/wire.js';
import { type FollowTiming, followExpired, nextPollAt } from './follow-plan.js';
import { utcDay } from './proof-names.js';
import type { EventRow, JobRow, PolledEvent, PollRecord } from './store.js';

const FINAL_JOB = new Set(['COMPLETED', 'FAILED']);
/** A 404 for a job recorded less than this long ago is retried, not given up. */
export const NOT_FOUND_GRACE_MS = 3_600_000;

function isFinalJob(status: string | undefined): boolean {
  return status !== undefined && FINAL_JOB.has(normaliseJobStatus(status));
}

/** The job is no longer followed: why, and the row that says so (done, due now, changed). */
export interface GiveUp {
  why: string;
  record: PollRecord;
}

function giveUp(row: JobRow, why: string, status: string, jobJson: string, now: number): GiveUp {
  return {
    why,
    record: {
      jobId: row.jobId,
      status,
      jobJson,
      nextPollAt: now,
      unchangedPolls: row.unchangedPolls,
      done: true,
      gaveUp: why,
      changed: true,
    },
  };
}

/**
 * Before any call: given up past follow.maxFollowMs; otherwise the job as stored, and whether the
 * service is asked for it again (not while the stored status is final: a final job stays final).
 */
export function pollStart(
  row: JobRow,
  now: number,
  timing: FollowTiming,
): { giveUp: GiveUp } | { giveUp?: undefined; stored: Job | undefined; fetch: boolean } {
  if (followExpired(row.recordedAt, now, timing)) {
    return {
      giveUp: giveUp(
        row,
        'not final after follow.maxFollowMs',
        row.status ?? 'UNKNOWN',
        row.jobJson ?? '{}',
        now,
      ),
    };
  }
  return {
    stored: row.jobJson ? (JSON.parse(row.jobJson) as Job) : undefined,
    fetch: !isFinalJob(row.status),
  };
}

/**
 * The service answered 404 for the job: just uploaded, a wrong managed company or a slow replica
 * (undefined: the task's backoff asks again); only a job the service has long forgotten is given up.
 */
export function afterNotFound(row: JobRow, now: number): GiveUp | undefined {
  if (now - row.recordedAt < NOT_FOUND_GRACE_MS) return undefined;
  return giveUp(row, 'the service no longer knows the job', 'NOT_FOUND', '{}', now);
}

/** What a page's judgement needs of the configuration. */
export interface PageRules {
  /** proofs.documentTypes */
  documentTypes: ReadonlySet<string>;
  /** follow.documentWaitMs */
  documentWaitMs: number;
}

export function pageRules(config: ReturnsConfig): PageRules {
  return {
    documentTypes: new Set(config.proofs.documentTypes),
    documentWaitMs: config.follow.documentWaitMs,
  };
}

/** A document of a final event that the configuration asks for (named by the shell). */
export interface WantedDocument {
  event: SendingEvent;
  document: SendingEventDocument;
}

export interface PageDecision {
  /** Every event of the page as it is to be recorded (final time kept from the first time seen final). */
  records: PolledEvent[];
  /** Events final for the first time in this poll. */
  newlyFinal: SendingEvent[];
  /** Documents of the page's final events of a wanted type, in the page's order. */
  wanted: WantedDocument[];
  /** An event is new or differs from its record: the file's status version moves. */
  changed: boolean;
  /**
   * Every event is final and has a wanted document, or has waited follow.documentWaitMs for one
   * since it became final (documents may come after the final state).
   */
  settled: boolean;
}

/** One page of a job's events against their records (`recorded`, by id; absent: never seen). */
export function judgePage(
  events: readonly SendingEvent[],
  recorded: ReadonlyMap<string, Pick<EventRow, 'eventJson' | 'finalAt'>>,
  now: number,
  rules: PageRules,
): PageDecision {
  const decision: PageDecision = { records: [], newlyFinal: [], wanted: [], changed: false, settled: true };
  for (const event of events) {
    const json = JSON.stringify(event);
    const before = recorded.get(event.id);
    if (before?.eventJson !== json) decision.changed = true;
    const final = isFinalSendingEvent(event);
    let finalAt = before?.finalAt;
    if (final && finalAt === undefined) {
      finalAt = now;
      decision.newlyFinal.push(event);
    }
    decision.records.push({
      id: event.id,
      businessStatus: event.businessStatus,
      status: event.status,
      json,
      ...(final && finalAt !== undefined ? { finalAt, finalDay: utcDay(finalAt) } : {}),
    });
    if (!final) {
      decision.settled = false;
      continue;
    }
    let hasWanted = false;
    for (const document of event.documents ?? []) {
      if (!rules.documentTypes.has(document.type)) continue;
      hasWanted = true;
      decision.wanted.push({ event, document });
    }
    if (!hasWanted && (finalAt ?? now) + rules.documentWaitMs > now) decision.settled = false;
  }
  return decision;
}

/** What the pages of one poll added up to. */
export interface PollTally {
  /** The job's status as the service (or the stored final record) says it, normalised. */
  status: string;
  /** Something the status file shows changed: the job's status or an event. */
  changed: boolean;
  /** Events listed over all pages. */
  events: number;
  /** Every page settled. */
  settled: boolean;
}

/** The tally before the first page: the job's status against the stored one. */
export function startTally(row: JobRow, job: Job | undefined): PollTally {
  const status = job ? normaliseJobStatus(job.status) : 'UNKNOWN';
  return { status, changed: status !== row.status, events: 0, settled: true };
}

export function addPage(tally: PollTally, events: number, page: PageDecision): PollTally {
  return {
    status: tally.status,
    changed: tally.changed || page.changed,
    events: tally.events + events,
    settled: tally.settled && page.settled,
  };
}

/**
 * The job's row after its last page. Done (the settle rule): the job is final, every event it
 * counts was listed, and every page settled. Unchanged polls in a row stretch the next poll
 * (follow-plan.ts); a change brings it back to the minimum.
 */
export function judgeEnd(
  row: JobRow,
  job: Job | undefined,
  tally: PollTally,
  now: number,
  webhooksActive: boolean,
  timing: FollowTiming,
): PollRecord {
  const done = isFinalJob(tally.status) && tally.events >= (job?.sendingEventCount ?? 0) && tally.settled;
  const unchangedPolls = tally.changed ? 0 : row.unchangedPolls + 1;
  return {
    jobId: row.jobId,
    status: tally.status,
    jobJson: JSON.stringify(job ?? {}),
    nextPollAt: nextPollAt({ now, followedSince: row.recordedAt, unchangedPolls, webhooksActive }, timing),
    unchangedPolls,
    done,
    changed: tally.changed,
  };
}
