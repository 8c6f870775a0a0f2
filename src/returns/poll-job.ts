/**
 * One poll of one job: GET /jobs/{id} (until the job is final), GET /sending-events?jobId= (every
 * page, each recorded in a store transaction as it arrives: what changed, the documents to fetch),
 * then the job's row with its next poll time. Nothing is written for the ERP here; the follower writes status files from the store.
 */
import { isApiError } from '../api/errors.js';
import type { CallOptions, DocexClient } from '../api/index.js';
import type { ReturnsConfig } from '../config/returns-schema.js';
import type { Logger } from '../core/logger.js';
import { isFinalSendingEvent, type Job, normaliseJobStatus, type SendingEvent } from '../domain/wire.js';
import type { CallGate } from './call-gate.js';
import { followExpired, nextPollAt } from './follow-plan.js';
import { proofPath, safeSegment, stemOf, utcDay } from './proof-names.js';
import type { JobRow, NewDocument, PolledEvent, ReturnsStore, SourceRow } from './store.js';

export type FollowClient = {
  jobs: Pick<DocexClient['jobs'], 'get'>;
  sendingEvents: Pick<DocexClient['sendingEvents'], 'list' | 'get' | 'downloadUrl' | 'downloadFile'>;
};

export interface PollDeps {
  client: FollowClient;
  store: ReturnsStore;
  gate: CallGate;
  config: ReturnsConfig;
  log: Logger;
  now(): number;
  webhooksActive(): boolean;
}

const FINAL_JOB = new Set(['COMPLETED', 'FAILED']);
const PAGE = 1000;
/** A 404 for a job recorded less than this long ago is retried, not given up. */
export const NOT_FOUND_GRACE_MS = 3_600_000;

export function isFinalJob(status: string | undefined): boolean {
  return status !== undefined && FINAL_JOB.has(normaliseJobStatus(status));
}

/** The job's events, a page (up to 1,000) at a time: a job of 10,000 events is never held whole. */
async function* eventPages(
  deps: PollDeps,
  jobId: string,
  options: CallOptions,
): AsyncGenerator<SendingEvent[]> {
  let after: string | undefined;
  let seen = 0;
  for (;;) {
    const page = await deps.client.sendingEvents.list(
      { jobId, maxItems: PAGE, ...(after ? { after } : {}) },
      await deps.gate.take(options),
    );
    seen += page.items.length;
    yield page.items;
    if (page.items.length < PAGE || seen >= (page.totalItems ?? Number.POSITIVE_INFINITY)) return;
    after = page.items[page.items.length - 1]!.id;
  }
}

/** `name.ext` → `name-<suffix>.ext` (the extension of the last segment only). */
function withSuffix(target: string, suffix: string): string {
  const ext = target.lastIndexOf('.');
  const cut = ext > target.lastIndexOf('/') ? ext : target.length;
  return `${target.slice(0, cut)}-${suffix}${target.slice(cut)}`;
}

/**
 * Documents of a page's final events that the config asks for, with their names. `picked` holds
 * the paths named earlier in this poll: a template without `<fileReference>` gives two documents of
 * one type the same name, and the store only knows the documents of earlier polls. The second gets
 * its file reference (then a counter) added; a re-poll finds the first in the store and names them
 * alike. The store is asked about the page's plain names in one statement; only a name taken asks
 * again, one suffix at a time.
 */
async function wantedDocuments(
  deps: PollDeps,
  source: SourceRow,
  job: JobRow,
  events: readonly SendingEvent[],
  now: number,
  picked: Set<string>,
): Promise<NewDocument[]> {
  const types = new Set(deps.config.proofs.documentTypes);
  const candidates = events.flatMap((event) =>
    (event.documents ?? [])
      .filter((d) => types.has(d.type))
      .map((d) => ({
        event,
        d,
        path: proofPath(deps.config.proofs.nameTemplate, {
          date: source.day,
          folder: source.folder,
          file: source.fileName,
          jobId: job.jobId,
          sendingEventId: event.id,
          type: d.type,
          fileReference: d.fileReference,
          documentName: d.name,
          contentType: d.contentType,
        }),
      })),
  );
  if (candidates.length === 0) return [];
  const usedByOthers = await deps.store.pathsUsedByOthers(
    candidates.map((c) => ({ path: c.path, sendingEventId: c.event.id, fileReference: c.d.fileReference })),
  );
  const wanted: NewDocument[] = [];
  for (const [i, { event, d, path: named }] of candidates.entries()) {
    const taken = async (path: string) =>
      picked.has(path) || (await deps.store.pathUsedByOther(path, event.id, d.fileReference));
    let target = named;
    if (picked.has(named) || usedByOthers[i]) {
      const base = withSuffix(named, safeSegment(stemOf(d.fileReference)));
      target = base;
      for (let n = 2; await taken(target); n++) target = withSuffix(base, String(n));
    }
    picked.add(target);
    wanted.push({
      sendingEventId: event.id,
      fileReference: d.fileReference,
      jobId: job.jobId,
      type: d.type,
      name: d.name,
      contentType: d.contentType,
      size: d.size,
      path: target,
      nextTryAt: now,
    });
  }
  return wanted;
}

export interface PollResult {
  done: boolean;
  newlyFinal: string[];
  changed: boolean;
}

export async function pollJob(
  deps: PollDeps,
  row: JobRow,
  source: SourceRow,
  options: CallOptions = {},
): Promise<PollResult> {
  const { store, log, config } = deps;
  const fields = { folder: source.folder, file: source.fileName, jobId: row.jobId };
  const timing = config.follow;
  const start = deps.now();
  const giveUp = async (why: string, status: string, jobJson: string): Promise<PollResult> => {
    await store.recordPoll(
      {
        jobId: row.jobId,
        status,
        jobJson,
        nextPollAt: start,
        unchangedPolls: row.unchangedPolls,
        done: true,
        gaveUp: why,
        changed: true,
      },
      start,
    );
    log.warn({ ...fields, why }, 'job no longer followed');
    return { done: true, newlyFinal: [], changed: true };
  };
  if (followExpired(row.recordedAt, start, timing)) {
    return giveUp('not final after follow.maxFollowMs', row.status ?? 'UNKNOWN', row.jobJson ?? '{}');
  }

  let job: Job | undefined = row.jobJson ? (JSON.parse(row.jobJson) as Job) : undefined;
  if (!isFinalJob(row.status)) {
    try {
      job = await deps.client.jobs.get(row.jobId, await deps.gate.take(options));
    } catch (err) {
      // Just uploaded and not found: a wrong managed company or a slow replica; the task's
      // backoff asks again. Only a job the service has long forgotten is given up.
      if (isApiError(err) && err.status === 404 && start - row.recordedAt >= NOT_FOUND_GRACE_MS)
        return giveUp('the service no longer knows the job', 'NOT_FOUND', '{}');
      throw err;
    }
  }
  const status = job ? normaliseJobStatus(job.status) : 'UNKNOWN';
  const now = deps.now();

  let changed = status !== row.status;
  const newlyFinal: string[] = [];
  let eventCount = 0;
  let allSettled = true;
  const types = new Set(config.proofs.documentTypes);
  const picked = new Set<string>();
  // Each page is recorded as it arrives (events and documents; the file's status version moves
  // with a changed page), the job's own row last: a poll cut short is repeated whole, and upserts.
  for await (const events of eventPages(deps, row.jobId, options)) {
    const records: PolledEvent[] = [];
    const documents: NewDocument[] = [];
    const finals: SendingEvent[] = [];
    let pageChanged = false;
    // The page's events as recorded, read at once (one statement, not one per event).
    const recorded = await store.eventsById(events.map((e) => e.id));
    for (const event of events) {
      const json = JSON.stringify(event);
      const before = recorded.get(event.id);
      if (before?.eventJson !== json) pageChanged = true;
      const final = isFinalSendingEvent(event);
      let finalAt = before?.finalAt;
      if (final && finalAt === undefined) {
        finalAt = now;
        newlyFinal.push(event.id);
        log.info(
          { ...fields, sendingEventId: event.id, businessStatus: event.businessStatus, status: event.status },
          'sending event final',
        );
      }
      records.push({
        id: event.id,
        businessStatus: event.businessStatus,
        status: event.status,
        json,
        ...(final && finalAt !== undefined ? { finalAt, finalDay: utcDay(finalAt) } : {}),
      });
      if (!final) {
        allSettled = false;
        continue;
      }
      finals.push(event);
      const hasWanted = (event.documents ?? []).some((d) => types.has(d.type));
      if (!hasWanted && (finalAt ?? now) + timing.documentWaitMs > now) allSettled = false;
    }
    documents.push(...(await wantedDocuments(deps, source, row, finals, now, picked)));
    await store.recordEvents(row.jobId, records, documents, now, pageChanged);
    changed ||= pageChanged;
    eventCount += events.length;
  }
  const expected = job?.sendingEventCount ?? 0;
  const done = isFinalJob(status) && eventCount >= expected && allSettled;
  const unchangedPolls = changed ? 0 : row.unchangedPolls + 1;
  await store.recordPoll(
    {
      jobId: row.jobId,
      status,
      jobJson: JSON.stringify(job ?? {}),
      nextPollAt: nextPollAt(
        { now, followedSince: row.recordedAt, unchangedPolls, webhooksActive: deps.webhooksActive() },
        timing,
      ),
      unchangedPolls,
      done,
      changed,
    },
    now,
  );
  if (done) log.info({ ...fields, status, sendingEvents: eventCount }, 'job followed to the end');
  else log.debug({ ...fields, status, sendingEvents: eventCount, changed }, 'job polled');
  return { done, newlyFinal, changed };
}
