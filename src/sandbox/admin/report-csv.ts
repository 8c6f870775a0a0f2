/**
 * The CSV body of a report: pure, plain records in and text out. USAGE lists usage events,
 * SENDINGS sending events, INVOICES the sending events built with invoice tracking.
 */
import { csvLine } from '../../core/csv.js';

export type ReportType = 'USAGE' | 'SENDINGS' | 'INVOICES';

export const REPORT_COLUMNS: Record<ReportType, readonly string[]> = {
  USAGE: [
    'id',
    'timestamp',
    'companyId',
    'departmentId',
    'jobId',
    'sendingEventId',
    'channel',
    'unit',
    'quantity',
  ],
  SENDINGS: [
    'id',
    'jobId',
    'jobName',
    'workflowId',
    'departmentId',
    'startDate',
    'endDate',
    'status',
    'businessStatus',
  ],
  INVOICES: ['id', 'invoiceId', 'jobId', 'departmentId', 'startDate', 'businessStatus'],
};

export function reportCsv(type: ReportType, rows: readonly Record<string, unknown>[]): string {
  const columns = REPORT_COLUMNS[type];
  // The service's report as it writes it: no formula prefix (the emulator copies, the agent protects).
  const raw = { formulaSafe: false };
  return [
    csvLine(columns, raw),
    ...rows.map((row) =>
      csvLine(
        columns.map((c) => row[c]),
        raw,
      ),
    ),
  ].join('');
}
