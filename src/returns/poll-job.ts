/**
 * One poll of one job, the shell around poll-step.ts: GET /jobs/{id} (until the job is final),
 * GET /sending-events?jobId= (every page, each recorded in a store transaction as it arrives: what
 * changed, the documents to fetch), then the job's row with its next poll time. What to record is
 * the pure step's decision; proof names are proof-names.ts's, made unique here against the store.
 * Nothing is written for the ERP here; the follower writes status files from the store.
 */
import { isApiError } from '../api/errors.js';
import type { CallOptions, DocexClient } from '../api/index.js';
import type { ReturnsConfig } from '../config/returns-schema.js';
import { GarbagePacer } from '../core/collect.js';
import type { Logger } from '../core/logger.js';
import type { Job, SendingEvent } from '../domain/wire.js';
import type { CallGate } from './call-gate.js';
import {
  addPage,
  afterNotFound,
  type GiveUp,
  judgeEnd,
  judgePage,
  pageRules,
  pollStart,
  startTally,
  type WantedDocument,
} from './poll-step.js';
import { namesWhenTaken, type ProofOwner, proofName } from './proof-names.js';
import type { JobRow, NewDocument, ReturnsStore, SourceRow } from './store.js';

export { NOT_FOUND_GRACE_MS } from './poll-step.js';

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

const PAGE = 1000;
/** A full GC after this many events of one poll (core/collect.ts GarbagePacer): a big job's pages. */
const COLLECT_EVERY_EVENTS = 2 * PAGE;

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

/**
 * The page's wanted documents with their names. `picked` holds the paths named earlier in this
 * poll: the store only knows the documents of earlier polls. A name taken gets the next of
 * namesWhenTaken that is free; a re-poll finds the first in the store and names them alike. The
 * store is asked about the page's template names in one statement; only a name taken asks again,
 * one candidate at a time.
 */
async function namedDocuments(
  deps: PollDeps,
  owner: ProofOwner,
  wanted: readonly WantedDocument[],
  now: number,
  picked: Set<string>,
): Promise<NewDocument[]> {
  if (wanted.length === 0) return [];
  const template = deps.config.proofs.nameTemplate;
  const named = wanted.map((w) => proofName(template, owner, w.event.id, w.document));
  const usedByOthers = await deps.store.pathsUsedByOthers(
    wanted.map((w, i) => ({
      path: named[i]!,
      sendingEventId: w.event.id,
      fileReference: w.document.fileReference,
    })),
  );
  const documents: NewDocument[] = [];
  for (const [i, { event, document: d }] of wanted.entries()) {
    let target = named[i]!;
    if (picked.has(target) || usedByOthers[i]) {
      for (const next of namesWhenTaken(target, d.fileReference)) {
        target = next;
        if (!picked.has(next) && !(await deps.store.pathUsedByOther(next, event.id, d.fileReference))) break;
      }
    }
    picked.add(target);
    documents.push({
      sendingEventId: event.id,
      fileReference: d.fileReference,
      jobId: owner.jobId,
      type: d.type,
      name: d.name,
      contentType: d.contentType,
      size: d.size,
      path: target,
      nextTryAt: now,
    });
  }
  return documents;
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
  const start = deps.now();
  const gaveUp = async ({ why, record }: GiveUp): Promise<PollResult> => {
    await store.recordPoll(record, start);
    log.warn({ ...fields, why }, 'job no longer followed');
    return { done: true, newlyFinal: [], changed: true };
  };
  const first = pollStart(row, start, config.follow);
  if (first.giveUp) return gaveUp(first.giveUp);

  let job: Job | undefined = first.stored;
  if (first.fetch) {
    try {
      job = await deps.client.jobs.get(row.jobId, await deps.gate.take(options));
    } catch (err) {
      const given = isApiError(err) && err.status === 404 ? afterNotFound(row, start) : undefined;
      if (given) return gaveUp(given);
      throw err;
    }
  }
  const now = deps.now();
  let tally = startTally(row, job);
  const newlyFinal: string[] = [];
  const rules = pageRules(config);
  const owner: ProofOwner = {
    day: source.day,
    folder: source.folder,
    fileName: source.fileName,
    jobId: row.jobId,
  };
  const picked = new Set<string>();
  const pacer = new GarbagePacer(COLLECT_EVERY_EVENTS, 'major');
  // Each page is recorded as it arrives (events and documents; the file's status version moves
  // with a changed page), the job's own row last: a poll cut short is repeated whole, and upserts.
  for await (const events of eventPages(deps, row.jobId, options)) {
    // The page's events as recorded, read at once (one statement, not one per event).
    const page = judgePage(events, await store.eventsById(events.map((e) => e.id)), now, rules);
    for (const event of page.newlyFinal) {
      newlyFinal.push(event.id);
      log.info(
        { ...fields, sendingEventId: event.id, businessStatus: event.businessStatus, status: event.status },
        'sending event final',
      );
    }
    const documents = await namedDocuments(deps, owner, page.wanted, now, picked);
    await store.recordEvents(row.jobId, page.records, documents, now, page.changed);
    tally = addPage(tally, events.length, page);
    pacer.passed(events.length);
  }
  const record = judgeEnd(row, job, tally, now, deps.webhooksActive(), config.follow);
  await store.recordPoll(record, now);
  const { status, changed } = record;
  if (record.done) log.info({ ...fields, status, sendingEvents: tally.events }, 'job followed to the end');
  else log.debug({ ...fields, status, sendingEvents: tally.events, changed }, 'job polled');
  return { done: record.done, newlyFinal, changed };
}
