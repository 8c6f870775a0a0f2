/**
 * RFC 4180 CSV: a field holding a comma, quote, CR or LF is quoted, its quotes doubled.
 *
 * Text cells are formula-safe (OWASP, CSV injection): one starting with `=`, `+`, `-`, `@`, a tab
 * or a CR gets a leading `'`, so a spreadsheet shows `=HYPERLINK(...)` from a file name or a
 * recipient as text instead of running it. Numbers are written as numbers (-5 stays -5).
 */
export function csvField(value: unknown, options: { formulaSafe?: boolean } = {}): string {
  if (value === undefined || value === null) return '';
  let text = typeof value === 'string' ? value : String(value);
  if (options.formulaSafe !== false && typeof value === 'string' && /^[=+\-@\t\r]/.test(text))
    text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV line, CRLF-terminated; `formulaSafe: false` only for a faithful copy of another system's file. */
export function csvLine(values: readonly unknown[], options: { formulaSafe?: boolean } = {}): string {
  return `${values.map((v) => csvField(v, options)).join(',')}\r\n`;
}
