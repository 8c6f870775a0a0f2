/**
 * `statuses-YYYY-MM-DD.csv`: one row per sending event that became final on that UTC day (as the
 * agent recorded it, so a late poll never changes a day already written), for ERP import. The
 * row builder is pure; `writeDailyCsv` reads the store and writes through the output target.
 */
import { isoTime } from '../core/clock.js';
import { csvLine } from '../core/csv.js';
import type { SendingEvent } from '../domain/wire.js';
import type { OutputTarget } from '../outputs/types.js';
import { utcDay } from './proof-names.js';
import { eventView, type IssueView, parseJson } from './status-view.js';
import type { DocumentRow, EventRow, JobRow, ReturnsStore, SourceRow } from './store.js';

export const CSV_COLUMNS = [
  'finalAt',
  'folder',
  'file',
  'row',
  'label',
  'jobId',
  'jobName',
  'sendingEventId',
  'recipient',
  'sourceFileReference',
  'businessStatus',
  'status',
  'startDate',
  'endDate',
  'errorCodes',
  'errors',
  'warnings',
  'proofs',
] as const;

export interface CsvEntry {
  event: EventRow;
  job: JobRow;
  source: SourceRow;
  documents: DocumentRow[];
}

const codes = (list: IssueView[]) =>
  list
    .map((i) => i.code ?? '')
    .filter(Boolean)
    .join(' ');
const messages = (list: IssueView[]) =>
  list.map((i) => (i.code ? `${i.code}: ${i.message}` : i.message)).join(' | ');

export function csvRow(entry: CsvEntry): unknown[] {
  const wire = parseJson<SendingEvent>(entry.event.eventJson);
  const view = wire ? eventView(wire) : undefined;
  return [
    entry.event.finalAt === undefined ? '' : isoTime(entry.event.finalAt),
    entry.source.folder,
    entry.source.fileName,
    entry.job.rowIndex,
    entry.job.label,
    entry.job.jobId,
    entry.job.jobName,
    entry.event.id,
    view?.recipient,
    view?.sourceFileReference,
    entry.event.businessStatus,
    entry.event.status,
    view?.startDate,
    view?.endDate,
    view ? codes(view.errors) : '',
    view ? messages(view.errors) : '',
    view ? messages(view.warnings) : '',
    entry.documents
      .filter((d) => d.state === 'done')
      .map((d) => d.path)
      .join(' '),
  ];
}

export function renderCsv(entries: readonly CsvEntry[]): string {
  return csvLine(CSV_COLUMNS) + entries.map((e) => csvLine(csvRow(e))).join('');
}

export function csvFileName(day: string): string {
  return `statuses-${day}.csv`;
}

/** Writes (or rewrites) one day's file from the store; answers its row count. */
export async function writeDailyCsv(
  store: ReturnsStore,
  target: OutputTarget,
  day: string,
  now: number,
  /** Told the rows read so far of the day's total (`report`'s progress line). */
  onProgress?: (rows: number, total: number) => void,
): Promise<number> {
  const events = store.eventsFinalOn(day);
  const entries = events.map((e, i) => {
    onProgress?.(i + 1, events.length);
    return { ...e, documents: store.documentsOfEvent(e.event.id) };
  });
  await target.write(csvFileName(day), renderCsv(entries));
  // A day not over yet (a `report` run today) may still get rows: the nightly run writes it again.
  if (day < utcDay(now)) store.recordCsv(day, entries.length, now);
  return entries.length;
}
