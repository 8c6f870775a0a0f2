/**
 * Payload job requests from CSV: one request per data row (payload-word), or one per PDF of a
 * payload-pdf batch (index.csv). Rows keep their spreadsheet numbers for the report.
 */
import path from 'node:path';
import { quoteName, reject } from '../inspect/codes.js';
import { parseCsv } from '../inspect/csv.js';
import { decodeUtf8 } from '../inspect/text.js';
import { buildRow, type ColumnMapping, planColumns } from './columns.js';
import type { BuildResult, BuiltRow } from './types.js';

export interface CsvRequestOptions {
  workflowId: string;
  /** The dropped file's name: used in reasons and default job names. */
  fileName: string;
  mapping?: ColumnMapping;
  /** Prepended to default job names (e.g. the folder's name). */
  jobNamePrefix?: string;
}

function textOf(
  input: string | Buffer,
  fileName: string,
): { ok: true; text: string } | ReturnType<typeof reject> {
  return typeof input === 'string' ? { ok: true, text: input } : decodeUtf8(input, fileName);
}

const stem = (fileName: string) => path.basename(fileName, path.extname(fileName));

/**
 * payload-word rows. Defaults: jobName `<prefix><fileName> row <n>`, filename `<stem>-row-<n>.docx`
 * (the generated document); a jobName or filename column overrides them.
 */
export function payloadRequestsFromCsv(input: string | Buffer, opts: CsvRequestOptions): BuildResult {
  const decoded = textOf(input, opts.fileName);
  if (!decoded.ok) return decoded;
  const parsed = parseCsv(decoded.text, opts.fileName);
  if (!parsed.ok) return parsed;
  if (parsed.records.length === 0) {
    return reject('DOCEX_INPUT_NO_RECORDS', `${quoteName(opts.fileName)} has a header but no data rows.`);
  }
  const planned = planColumns(parsed.header, { mapping: opts.mapping, fileName: opts.fileName });
  if (!planned.ok) return planned;
  const rows = parsed.records.map((r) =>
    buildRow(planned.plan, r.cells, {
      row: r.row,
      workflowId: opts.workflowId,
      jobName: `${opts.jobNamePrefix ?? ''}${opts.fileName} row ${r.row}`,
      filename: `${stem(opts.fileName)}-row-${r.row}.docx`,
    }),
  );
  return { ok: true, unit: 'row', rows };
}

export interface IndexCsvOptions extends Omit<CsvRequestOptions, 'fileName'> {
  /** Name of the index in reasons; `index.csv` by default. */
  fileName?: string;
  /** The PDFs of the batch (ZIP entry names or file names of the folder drop), when known. */
  pdfFiles?: readonly string[];
}

/**
 * payload-pdf batch: one row per PDF, the `file` column naming it (as in the ZIP or folder).
 * Defaults: jobName `<prefix><file>`, filename the PDF's base name. Every PDF of the batch must
 * have exactly one row: a PDF without a row would never be sent, so it rejects the batch.
 */
export function payloadPdfBatchFromIndexCsv(input: string | Buffer, opts: IndexCsvOptions): BuildResult {
  const fileName = opts.fileName ?? 'index.csv';
  const decoded = textOf(input, fileName);
  if (!decoded.ok) return decoded;
  const parsed = parseCsv(decoded.text, fileName);
  if (!parsed.ok) return parsed;
  const planned = planColumns(parsed.header, { mapping: opts.mapping, fileName, allowFile: true });
  if (!planned.ok) return planned;
  const hasFile = planned.plan.columns.some((c) => c.target.type === 'field' && c.target.field === 'file');
  if (!hasFile) {
    return reject(
      'DOCEX_INPUT_BATCH_INDEX',
      `${quoteName(fileName)} has no "file" column naming each row's PDF.`,
    );
  }
  const seen = new Map<string, number>();
  const known = opts.pdfFiles ? new Set(opts.pdfFiles) : undefined;
  const rows: BuiltRow[] = parsed.records.map((r) => {
    const fileCell = (
      r.cells[
        planned.plan.columns.findIndex((c) => c.target.type === 'field' && c.target.field === 'file')
      ] ?? ''
    ).trim();
    const built = buildRow(planned.plan, r.cells, {
      row: r.row,
      workflowId: opts.workflowId,
      jobName: `${opts.jobNamePrefix ?? ''}${fileCell}`,
      filename: path.posix.basename(fileCell),
    });
    const problem = (message: string): BuiltRow => ({
      row: r.row,
      problems: [{ rule: 'format', field: 'file', message }],
      ...(fileCell ? { file: fileCell } : {}),
    });
    if (fileCell === '') return problem('the file cell is empty');
    const earlier = seen.get(fileCell);
    seen.set(fileCell, earlier ?? r.row);
    if (earlier !== undefined) return problem(`${quoteName(fileCell)} is already named on row ${earlier}`);
    if (known && !known.has(fileCell)) return problem(`${quoteName(fileCell)} is not in the batch`);
    return built;
  });
  const unlisted = opts.pdfFiles?.filter((f) => !seen.has(f)) ?? [];
  if (unlisted.length > 0) {
    return reject(
      'DOCEX_INPUT_BATCH_INDEX',
      `${quoteName(fileName)} has no row for ${unlisted.map(quoteName).join(', ')}; every PDF of the batch needs one.`,
      { unlisted },
    );
  }
  return { ok: true, unit: 'row', rows };
}
