/** What the admin and usage commands print: JSON as is, or a plain text table. Pure. */
export type OutputFormat = 'json' | 'table';

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(',');
  return JSON.stringify(value);
}

/** Columns padded to their widest cell; a header row and a rule under it. */
export function renderTable(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  const cells = rows.map((row) => columns.map((c) => cell(row[c]).replace(/[\r\n\t]+/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')}\n`;
}

/** One record as a two-column table of field and value. */
export function renderRecord(record: Record<string, unknown>): string {
  return renderTable(
    Object.entries(record).map(([field, value]) => ({ field, value })),
    ['field', 'value'],
  );
}

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** A list (`columns` pick the table's) or a single record, in the chosen format. */
export function render(value: unknown, format: OutputFormat, columns?: readonly string[]): string {
  if (format === 'json') return renderJson(value);
  if (Array.isArray(value))
    return renderTable(value as Record<string, unknown>[], columns ?? Object.keys(value[0] ?? {}));
  if (value && typeof value === 'object') return renderRecord(value as Record<string, unknown>);
  return `${cell(value)}\n`;
}
