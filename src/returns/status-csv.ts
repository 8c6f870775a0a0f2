/**
 * `statuses-YYYY-MM-DD.csv`: one row per sending event that became final on that UTC day (as the
 * agent recorded it, so a late poll never changes a day already written), for ERP import. The
 * row builder is pure; `writeDailyCsv` reads the store and writes through the output target;
 * `dailyCsv` is the format the follower runs at each firing of `statuses.dailyCsvSchedule`.
 *
 * The daily CSV is written by one agent of those sharing a PostgreSQL journal: at a firing of its
 * schedule an agent that finds days due (csvDaysDue, the shared store's) claims the task
 * (`claimTask`, by the database's clock) for a window a little shorter than
 * `follow.maxIntervalMs`; the others look again after that window, when the days are written or,
 * the claimant having failed, due still, and then one of them claims it.
 */
import { Readable } from 'node:stream';
import { isoTime } from '../core/clock.js';
import { csvLine } from '../core/csv.js';
import type { Logger } from '../core/logger.js';
import type { SendingEvent } from '../domain/wire.js';
import type { OutputTarget } from '../outputs/types.js';
import { type CronPlan, cronPlan } from './cron-next.js';
import { utcDay } from './proof-names.js';
import { eventView, type IssueView, parseJson } from './status-view.js';
import type { StatusFormat, StatusWriter, StatusWriterContext } from './status-writer.js';
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

/** Every past UTC day with final events and no CSV yet, written; answers the days. */
export async function writeDueCsvs(
  store: ReturnsStore,
  target: OutputTarget,
  log: Logger,
  now: number,
): Promise<string[]> {
  const written: string[] = [];
  for (const day of await store.csvDaysDue(utcDay(now))) {
    const rows = await writeDailyCsv(store, target, day, now);
    log.info({ day, rows, file: csvFileName(day) }, 'daily status file written');
    written.push(day);
  }
  return written;
}

/** The cluster task of the daily CSV. */
export const DAILY_CSV_TASK = 'returns:daily-csv';
/**
 * The daily CSV is claimed for this share of follow.maxIntervalMs, the delay after which a
 * failed write, or an agent that lost the claim, looks again: by then the window is over.
 */
const CSV_CLAIM_SHARE = 0.9;

/** The daily CSV at the firings of its schedule; days missed while the agent was down at its start. */
class DailyCsvWriter implements StatusWriter {
  readonly failed = 'daily status file failed: tried again later';
  readonly retryMs: number;
  private readonly plan: CronPlan;

  constructor(private readonly context: StatusWriterContext) {
    this.plan = cronPlan(context.config.statuses.dailyCsvSchedule);
    this.retryMs = context.config.follow.maxIntervalMs;
  }

  /**
   * The days due when this agent claims them (always, without claimTask). Answers when to look
   * again: the next firing, or after the claim's window when another agent has it.
   */
  async write(now: number): Promise<number> {
    const { store, target, log, claimTask } = this.context;
    const nextFiring = this.plan.next(now) ?? Number.POSITIVE_INFINITY;
    if (claimTask) {
      // Nothing due, nothing claimed: a claim made for nothing would hold a firing's days back.
      if ((await store.csvDaysDue(utcDay(now))).length === 0) return nextFiring;
      const window = Math.max(1, Math.floor(this.retryMs * CSV_CLAIM_SHARE));
      if (!(await claimTask(DAILY_CSV_TASK, window))) {
        log.debug('daily status file: another agent writes it; looked at again later');
        return now + this.retryMs;
      }
    }
    await writeDueCsvs(store, target, log, now);
    return nextFiring;
  }
}

/** `statuses-YYYY-MM-DD.csv`, at `returns.statuses.dailyCsvSchedule`. */
export const dailyCsv: StatusFormat = (context) => new DailyCsvWriter(context);
