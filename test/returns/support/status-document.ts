/**
 * The status file's whole document built at once from its rows: what the file held before it was
 * streamed, and what the streamed text (statusFileText) must equal byte for byte.
 */
import {
  type StatusDocument,
  statusEvent,
  statusHeader,
  statusJob,
} from '../../../src/returns/status-files.js';
import type { DocumentRow, EventRow, JobRow, SourceRow } from '../../../src/returns/store.js';

export interface StatusInput {
  source: SourceRow;
  jobs: { job: JobRow; events: { event: EventRow; documents: DocumentRow[] }[] }[];
}

/** Every job of the file followed to its end and every proof written. */
function isFinal(input: StatusInput): boolean {
  return (
    input.jobs.length > 0 &&
    input.jobs.every((j) => j.job.done && j.events.every((e) => e.documents.every((d) => d.state === 'done')))
  );
}

export function buildStatusDocument(input: StatusInput): StatusDocument {
  return {
    ...statusHeader(input.source, isFinal(input)),
    jobs: input.jobs.map(({ job, events }) => ({
      ...statusJob(job),
      sendingEvents: events.flatMap(({ event, documents }) => {
        const view = statusEvent(event, documents);
        return view ? [view] : [];
      }),
    })),
  };
}
