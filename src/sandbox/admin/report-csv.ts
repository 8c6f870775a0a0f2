/**
 * The CSV body of a report: pure, plain records in and text out. USAGE lists usage events,
 * SENDINGS sending events, INVOICES the sending events built with invoice tracking.
 */
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

/** RFC 4180: quote a field holding a comma, quote, CR or LF; double the quotes inside. */
export function csvField(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function reportCsv(type: ReportType, rows: readonly Record<string, unknown>[]): string {
  const columns = REPORT_COLUMNS[type];
  const lines = [columns.join(',')];
  for (const row of rows) lines.push(columns.map((c) => csvField(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
