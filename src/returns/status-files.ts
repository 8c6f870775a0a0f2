/**
 * `<date>/<file>.status.json` per dropped file: its jobs and every sending event (recipient,
 * business and technical status, errors, warnings, the proofs written), rebuilt from the store
 * and rewritten atomically through the output target whenever the store's version of the file
 * moves. The build is pure; writing is the shell.
 */
import { isoTime } from '../core/clock.js';
import type { Job, SendingEvent } from '../domain/wire.js';
import type { OutputTarget } from '../outputs/types.js';
import { type EventView, eventView, type IssueView, jobErrors, parseJson } from './status-view.js';
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

export interface StatusInput {
  source: SourceRow;
  jobs: { job: JobRow; events: { event: EventRow; documents: DocumentRow[] }[] }[];
}

export function buildStatusDocument(input: StatusInput): StatusDocument {
  const { source } = input;
  return {
    file: source.fileName,
    folder: source.folder,
    sha256: source.sha256,
    claimedAt: isoTime(source.claimedAt),
    final:
      input.jobs.length > 0 &&
      input.jobs.every(
        (j) => j.job.done && j.events.every((e) => e.documents.every((d) => d.state === 'done')),
      ),
    jobs: input.jobs.map(({ job, events }) => ({
      jobId: job.jobId,
      jobName: job.jobName,
      row: job.rowIndex,
      label: job.label,
      status: job.status,
      followed: job.gaveUp ? 'gave-up' : job.done ? 'done' : 'following',
      errors: jobErrors(parseJson<Job>(job.jobJson)),
      sendingEvents: events.flatMap(({ event, documents }) => {
        const wire = parseJson<SendingEvent>(event.eventJson);
        if (!wire) return [];
        const proofs = new Map(documents.map((d) => [d.fileReference, d]));
        return [
          {
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
          },
        ];
      }),
    })),
  };
}

export function statusInput(store: ReturnsStore, source: SourceRow): StatusInput {
  return {
    source,
    jobs: store.jobsOfSource(source.itemId).map((job) => ({
      job,
      events: store
        .eventsOfJob(job.jobId)
        .map((event) => ({ event, documents: store.documentsOfEvent(event.id) })),
    })),
  };
}

/**
 * Writes each status file older than its state, once (a file that changes again meanwhile waits
 * for the next pass), until `enough()` says so; answers how many were written. What is left stays
 * stale in the store and is written at the next pass, or the next start.
 */
export async function writeStaleStatusFiles(
  store: ReturnsStore,
  target: OutputTarget,
  enough: () => boolean = () => false,
  limit = 1000,
): Promise<number> {
  let written = 0;
  for (const source of store.staleSources(limit)) {
    if (enough()) break;
    const doc = buildStatusDocument(statusInput(store, source));
    await target.write(source.statusPath, `${JSON.stringify(doc, null, 2)}\n`);
    store.markStatusWritten(source.itemId, source.version);
    written++;
  }
  return written;
}
