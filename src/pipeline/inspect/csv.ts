/**
 * CSV as ERPs write it: `,` or `;` (European exports), sometimes tab or `|`; a BOM from Excel;
 * CRLF line ends. Rows are numbered as a spreadsheet shows them (header = row 1), counting blank
 * lines, so an operator can go straight to the row named in a report.
 */
import type Papa from 'papaparse';
import { lazyRequire } from '../../core/lazy-require.js';
import { type InputRejection, quoteName, reject } from './codes.js';
import { overLimit, parseLimits } from './limits.js';
import { decodeUtf8 } from './text.js';

const papa = lazyRequire<typeof Papa>('papaparse');

export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;

export interface CsvRecord {
  /** Spreadsheet row number: the header is row 1, the first data row 2. */
  row: number;
  cells: string[];
}

export interface ParsedCsv {
  ok: true;
  delimiter: string;
  lineBreak: string;
  header: string[];
  records: CsvRecord[];
}

const MAX_LISTED = 10;

function listRows(rows: number[]): string {
  const shown = rows.slice(0, MAX_LISTED).join(', ');
  return rows.length > MAX_LISTED ? `${shown} and ${rows.length - MAX_LISTED} more` : shown;
}

const delimiterName = (d: string) => (d === '\t' ? 'tab' : `"${d}"`);

const isBlankCells = (cells: string[]) => cells.every((c) => c.trim() === '');

/**
 * Papaparse's own guess is thrown off by a trailing blank line and by short files, so each
 * candidate is tried on the first rows: the one whose rows most often have the header's field
 * count (two or more) wins, then the one with more fields; a one-column file falls back to ",".
 */
export function guessDelimiter(text: string): string {
  let best = { delimiter: ',', consistency: 0, fields: 1 };
  for (const delimiter of CSV_DELIMITERS) {
    const rows = papa()
      .parse<string[]>(text, { delimiter, preview: 50 })
      .data.filter((r) => !isBlankCells(r));
    const fields = rows[0]?.length ?? 0;
    if (fields < 2) continue;
    const consistency = rows.filter((r) => r.length === fields).length / rows.length;
    if (consistency > best.consistency || (consistency === best.consistency && fields > best.fields)) {
      best = { delimiter, consistency, fields };
    }
  }
  return best.delimiter;
}

/** Length of the longest line, in UTF-16 units (bytes for ASCII), without splitting the text. */
function longestLine(text: string): number {
  let longest = 0;
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    longest = Math.max(longest, end - start);
    start = end + 1;
  }
  return longest;
}

/** Parses CSV text (BOM already dropped or not) into a header and numbered data records. */
export function parseCsv(text: string, fileName: string): ParsedCsv | InputRejection {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const limits = parseLimits();
  if (longestLine(source) > limits.csvLineBytes) return overLimit(fileName, 'has a line', 'csvLineBytes');
  const parsed = papa().parse<string[]>(source, {
    delimiter: guessDelimiter(source),
    skipEmptyLines: false,
    header: false,
  });
  const quoteError = parsed.errors.find((e) => e.type === 'Quotes');
  if (quoteError) {
    const row = (quoteError.row ?? 0) + 1;
    return reject(
      'DOCEX_INPUT_CSV_MALFORMED',
      `${quoteName(fileName)} cannot be parsed as CSV: ${quoteError.message.toLowerCase()} at row ${row}.`,
      { row },
    );
  }
  const all = parsed.data.map((cells, i) => ({ row: i + 1, cells }));
  const isBlank = (r: CsvRecord) => isBlankCells(r.cells);
  const headerRecord = all.find((r) => !isBlank(r));
  if (!headerRecord) {
    return reject('DOCEX_INPUT_NO_RECORDS', `${quoteName(fileName)} holds no header and no data rows.`);
  }
  if (headerRecord.cells.length > limits.csvColumns) {
    return overLimit(fileName, 'has a number of columns', 'csvColumns');
  }
  const header = headerRecord.cells.map((c) => c.trim());
  const records = all.filter((r) => r.row > headerRecord.row && !isBlank(r));
  const delimiter = parsed.meta.delimiter;
  const ragged = records.filter((r) => r.cells.length !== header.length).map((r) => r.row);
  if (ragged.length > 0) {
    return reject(
      'DOCEX_INPUT_CSV_RAGGED',
      `${quoteName(fileName)} has rows whose number of fields differs from the header's ${header.length} ` +
        `(delimiter ${delimiterName(delimiter)}): row ${listRows(ragged)}.`,
      { rows: ragged, delimiter, columns: header.length },
    );
  }
  return { ok: true, delimiter, lineBreak: parsed.meta.linebreak, header, records };
}

/** Checks a CSV file's bytes: UTF-8, parseable, rectangular, at least one data row. */
export function inspectCsvBytes(
  bytes: Buffer,
  fileName: string,
): { ok: true; details: Record<string, unknown> } | InputRejection {
  const decoded = decodeUtf8(bytes, fileName);
  if (!decoded.ok) return decoded;
  const parsed = parseCsv(decoded.text, fileName);
  if (!parsed.ok) return parsed;
  if (parsed.records.length === 0) {
    return reject('DOCEX_INPUT_NO_RECORDS', `${quoteName(fileName)} has a header but no data rows.`);
  }
  const empty = parsed.header.map((h, i) => (h === '' ? i + 1 : 0)).filter((i) => i > 0);
  if (empty.length > 0) {
    return reject(
      'DOCEX_INPUT_CSV_MALFORMED',
      `${quoteName(fileName)} has an empty column name in its header (column ${empty.join(', ')}).`,
      { columns: empty },
    );
  }
  return {
    ok: true,
    details: {
      delimiter: parsed.delimiter,
      lineBreak: parsed.lineBreak,
      columns: parsed.header,
      rows: parsed.records.length,
    },
  };
}
