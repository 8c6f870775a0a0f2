/**
 * `<date>/<file>.status.json` per dropped file: its jobs and every sending event (recipient,
 * business and technical status, errors, warnings, the proofs written), rebuilt from the store
 * and rewritten atomically through the output target whenever the store's version of the file
 * moves. The build is pure; writing is the shell; `statusFiles` is the format the follower runs.
 */
import { Readable } from 'node:stream';
import { isoTime } from '../core/clock.js';
import { GarbagePacer } from '../core/collect.js';
import type { Job, SendingEvent } from '../domain/wire.js';
import type { OutputTarget } from '../outputs/types.js';
import { type EventView, eventView, type IssueView, jobErrors, parseJson } from './status-view.js';
import type { StatusFormat, StatusWriter, StatusWriterContext } from './status-writer.js';
import type { DocumentRow, EventRow, JobRow, ReturnsStore, SourceRow } from './store.js';

export interface StatusDocument {
  file: string;
  folder: string;
  sha256: string;
  claimedAt: string;
  /** Every job of the file is followed to the end (or given up) and every proof is written. */
  final: boolean;
  jobs: {
    jobId: string;
    jobName: string | undefined;
    row: number | undefined;
    label: string | undefined;
    status: string | undefined;
    followed: 'following' | 'done' | 'gave-up';
    errors: IssueView[];
    sendingEvents: (EventView & {
      documents: {
        type: string;
        fileReference: string;
        name: string | undefined;
        proof: string | undefined;
      }[];
    })[];
  }[];
}

type StatusJob = StatusDocument['jobs'][number];
type StatusEvent = StatusJob['sendingEvents'][number];

/** The document's fields before its jobs. */
export function statusHeader(source: SourceRow, final: boolean): Omit<StatusDocument, 'jobs'> {
  return {
    file: source.fileName,
    folder: source.folder,
    sha256: source.sha256,
    claimedAt: isoTime(source.claimedAt),
    final,
  };
}

/** A job's fields before its events. */
export function statusJob(job: JobRow): Omit<StatusJob, 'sendingEvents'> {
  return {
    jobId: job.jobId,
    jobName: job.jobName,
    row: job.rowIndex,
    label: job.label,
    status: job.status,
    followed: job.gaveUp ? 'gave-up' : job.done ? 'done' : 'following',
    errors: jobErrors(parseJson<Job>(job.jobJson)),
  };
}

/** The event as the status file shows it; undefined when its stored record does not parse. */
export function statusEvent(event: EventRow, documents: DocumentRow[]): StatusEvent | undefined {
  const wire = parseJson<SendingEvent>(event.eventJson);
  if (!wire) return undefined;
  const proofs = new Map(documents.map((d) => [d.fileReference, d]));
  return {
    ...eventView(wire),
    documents: (wire.documents ?? []).map((d) => {
      const row = proofs.get(d.fileReference);
      return {
        type: d.type,
        fileReference: d.fileReference,
        name: d.name,
        proof: row?.state === 'done' ? row.path : undefined,
      };
    }),
  };
}

/** Events read from the store at a time while a status file is written. */
const EVENT_PAGE = 500;
/** A full GC after this many events of one status file (core/collect.ts GarbagePacer). */
const COLLECT_EVERY_EVENTS = 4 * EVENT_PAGE;
/** Stands for the array a pretty-printed object ends with, until its elements are written. */
const SLOT = '\u0000status-file-slot\u0000';

/**
 * `JSON.stringify(value, null, 2)` of an object whose last key holds an array, with that array's
 * elements written one at a time: the text before them and the text after. `depth`: how deep the
 * object sits in the document (each level indents by two spaces).
 */
function around(value: object, lastKey: string, depth: number): { open: string; close: string } {
  const text = indent(JSON.stringify({ ...value, [lastKey]: SLOT }, null, 2), depth);
  const at = text.lastIndexOf(JSON.stringify(SLOT));
  return { open: text.slice(0, at), close: text.slice(at + JSON.stringify(SLOT).length) };
}

function indent(text: string, depth: number): string {
  return depth === 0 ? text : text.replaceAll('\n', `\n${'  '.repeat(depth)}`);
}

/** `[` + elements + `]` as JSON.stringify(…, null, 2) writes them at `depth`. */
async function* prettyArray<T>(
  items: AsyncIterable<T>,
  depth: number,
  element: (item: T) => string,
): AsyncGenerator<string> {
  let first = true;
  const pad = '  '.repeat(depth + 1);
  for await (const item of items) {
    yield `${first ? '[\n' : ',\n'}${pad}${indent(element(item), depth + 1)}`;
    first = false;
  }
  yield first ? '[]' : `\n${'  '.repeat(depth)}]`;
}

async function* eventsOf(store: ReturnsStore, jobId: string): AsyncGenerator<StatusEvent> {
  // Each page lives across the writes of its text: promoted garbage, collected every few pages.
  const pacer = new GarbagePacer(COLLECT_EVERY_EVENTS, 'major');
  for (let after = ''; ; ) {
    pacer.passed(after === '' ? 0 : EVENT_PAGE);
    const page = await store.eventsWithDocumentsPage(jobId, after, EVENT_PAGE);
    for (const { event, documents } of page) {
      const view = statusEvent(event, documents);
      if (view) yield view;
    }
    if (page.length < EVENT_PAGE) return;
    after = page[page.length - 1]!.event.id;
  }
}

/**
 * The status file's text, piece by piece, as `JSON.stringify(document, null, 2)` writes the
 * whole document, reading the events a page at a time: a file of 10,000 events is never held whole,
 * neither as objects nor as text. Read as the output target writes, so a retry reads the events
 * again; `known`: the source's jobs, read with it under its lock (writeStatusAlone).
 */
export async function* statusFileText(
  store: ReturnsStore,
  source: SourceRow,
  known?: JobRow[],
): AsyncGenerator<string> {
  const jobs = known ?? (await store.jobsOfSource(source.itemId));
  const final = jobs.length > 0 && jobs.every((j) => j.done) && (await store.allDocumentsDone(source.itemId));
  const doc = around(statusHeader(source, final), 'jobs', 0);
  yield doc.open;
  for (const [i, job] of jobs.entries()) {
    const { open, close } = around(statusJob(job), 'sendingEvents', 2);
    yield `${i === 0 ? '[\n' : ',\n'}    ${open}`;
    yield* prettyArray(eventsOf(store, job.jobId), 3, (event) => JSON.stringify(event, null, 2));
    yield close;
  }
  yield jobs.length === 0 ? '[]' : '\n  ]';
  yield `${doc.close}\n`;
}

/**
 * Writes each status file older than its state, once (a file that changes again meanwhile waits
 * for the next pass), until `enough()` says so; answers how many were written. The text is
 * streamed from the store. What is left stays stale and is written at the next pass, or start.
 * A file another agent on the journal is writing now is left to it (store.writeStatusAlone).
 */
export async function writeStaleStatusFiles(
  store: ReturnsStore,
  target: OutputTarget,
  enough: () => boolean = () => false,
  limit = 1000,
): Promise<number> {
  let written = 0;
  for (const listed of await store.staleSources(limit)) {
    if (enough()) break;
    // Another agent writing this file now: it reads the store after this pass listed it, and a
    // change after its read leaves the file stale for the next pass. The source is read again
    // under the lock: another agent may have written the file between the list and the lock.
    const wrote = await store.writeStatusAlone(listed.itemId, async (source, jobs) => {
      if (source.writtenVersion >= source.version) return false;
      await target.write(source.statusPath, () => Readable.from(statusFileText(store, source, jobs)));
      return true;
    });
    if (wrote) written++;
  }
  return written;
}

/** How long the last status pass of a stop may write. */
const STOP_STATUS_BUDGET_MS = 2_000;
/** Status files may take about 1/this of the follower's time (see StatusFilesWriter). */
const STATUS_COST_SHARE = 20;

/**
 * The status files as the follower writes them: at each step, each file whose state moved. A job
 * of thousands of events changes with every proof: its file is rewritten at most once per loop
 * period (real time), not once per change, and, as such a file costs real time to build and write,
 * at most about 1/STATUS_COST_SHARE of the follower's time goes to them. Each write is synced: a
 * backlog must not hold a stop past the service manager's patience, so the last pass of a stop
 * writes for STOP_STATUS_BUDGET_MS at most; what is left is written at the next start.
 */
class StatusFilesWriter implements StatusWriter {
  readonly failed = 'status file write failed: tried again later';
  readonly retryMs: number;
  private writtenAt = Number.NEGATIVE_INFINITY;
  /** Real ms until the files may be rewritten: grows with what the last rewrite cost. */
  private pauseMs = 0;

  constructor(private readonly context: StatusWriterContext) {
    this.retryMs = context.config.follow.minIntervalMs;
  }

  async write(now: number): Promise<number> {
    await this.pass(false);
    return now;
  }

  lastPass(): Promise<void> {
    return this.pass(true);
  }

  private async pass(stopping: boolean): Promise<void> {
    const real = performance.now();
    if (!stopping && real - this.writtenAt < Math.max(this.context.periodMs, this.pauseMs)) return;
    this.writtenAt = real;
    const enough = stopping
      ? () => performance.now() - real > STOP_STATUS_BUDGET_MS
      : () => this.context.stopping();
    await writeStaleStatusFiles(this.context.store, this.context.target, enough);
    this.pauseMs = (performance.now() - real) * STATUS_COST_SHARE;
  }
}

/** `<date>/<file>.status.json` per dropped file: always on. */
export const statusFiles: StatusFormat = (context) => new StatusFilesWriter(context);
