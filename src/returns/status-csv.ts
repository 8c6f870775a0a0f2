/**
 * `statuses-YYYY-MM-DD.csv`: one row per sending event that became final on that UTC day (as the
 * agent recorded it, so a late poll never changes a day already written), for ERP import. The
 * row builder is pure; `writeDailyCsv` reads the store and writes through the output target.
 */
import { Readable } from 'node:stream';
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

/** Events read from the store at a time while a daily file is written. */
const CSV_PAGE = 500;

/** The day's file, line by line, as renderCsv writes it, reading the store a page at a time. */
export async function* dailyCsvText(
  store: ReturnsStore,
  day: string,
  onRow?: (rows: number) => void,
): AsyncGenerator<string> {
  yield csvLine(CSV_COLUMNS);
  let rows = 0;
  for (let after: { finalAt: number; id: string } | undefined; ; ) {
    const page = await store.eventsFinalOnPage(day, after, CSV_PAGE);
    for (const entry of page) {
      yield csvLine(csvRow(entry));
      onRow?.(++rows);
    }
    if (page.length < CSV_PAGE) return;
    const last = page[page.length - 1]!.event;
    after = { finalAt: last.finalAt!, id: last.id };
  }
}

/**
 * Writes (or rewrites) one day's file from the store, streamed (a day of 100,000 events is never
 * held whole); answers its row count. `onProgress`: rows written so far of the day's total.
 */
export async function writeDailyCsv(
  store: ReturnsStore,
  target: OutputTarget,
  day: string,
  now: number,
  onProgress?: (rows: number, total: number) => void,
): Promise<number> {
  const total = await store.countFinalOn(day);
  let rows = 0;
  await target.write(csvFileName(day), () =>
    Readable.from(
      dailyCsvText(store, day, (n) => {
        rows = n;
        onProgress?.(n, total);
      }),
    ),
  );
  // A day not over yet (a `report` run today) may still get rows: the nightly run writes it again.
  if (day < utcDay(now)) await store.recordCsv(day, rows, now);
  return rows;
}
