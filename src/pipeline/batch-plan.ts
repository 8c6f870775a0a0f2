/**
 * A payload-pdf batch cut into its rows: index.csv built against the batch's PDFs, every row
 * checked against the ten payload rules, numbered by position (the journal's rowIndex). Pure: the
 * same bytes give the same plan, so a restart rebuilds exactly the rows the journal recorded.
 */
import type { PayloadJobRequest, Workflow } from '../domain/wire.js';
import type { RowInput } from '../journal/index.js';
import {
  type BuildResult,
  checkRows,
  formatRowReport,
  type OnInvalidRow,
  type RowRejection,
} from './payload/index.js';
import type { RowsPlan } from './payload-plan.js';

export interface BatchRowTarget {
  /** The PDF's name as the batch holds it (ZIP entry or file name). */
  file: string;
  request: PayloadJobRequest;
}

export type BatchPlan = RowsPlan<BatchRowTarget>;

export interface BatchPlanInput {
  /** index.csv built against the batch's PDFs (by the isolated inspector); undefined when the batch has none. */
  built: BuildResult | undefined;
  workflow: Workflow;
  /** The batch's name for reasons (`batch.zip`). */
  batchName: string;
  indexName: string;
  onInvalidRow: OnInvalidRow;
}

function rowReason(rejections: readonly RowRejection[]): string {
  return rejections
    .map((r) => `${r.rule === 'format' ? 'format' : `rule ${r.rule}`}: ${r.message}`)
    .join('; ');
}

const rowLabel = (file: string | undefined, row: number) => `${file ?? '(no file)'} (row ${row})`;

export function planBatch(input: BatchPlanInput): BatchPlan {
  const { batchName, indexName } = input;
  const built = input.built;
  if (!built) {
    return {
      ok: false,
      code: 'DOCEX_INPUT_BATCH_INDEX',
      reason: `${JSON.stringify(batchName)} has no ${indexName} naming each PDF's identifiers`,
    };
  }
  if (!built.ok) return { ok: false, code: built.code, reason: `${batchName}: ${built.reason}` };
  if (built.rows.length === 0) {
    return { ok: false, code: 'DOCEX_INPUT_NO_RECORDS', reason: `${batchName}: ${indexName} has no rows` };
  }
  const check = checkRows(built.rows, input.workflow, 'payload-pdf', input.onInvalidRow);
  const report =
    check.rejected.length === 0
      ? undefined
      : formatRowReport(check.rejected, {
          fileName: `${batchName} ${indexName}`,
          unit: built.unit,
          totalRows: built.rows.length,
          fileRejected: check.fileRejected,
        });
  if (check.fileRejected) {
    const bad = new Set(check.rejected.map((r) => r.row)).size;
    return {
      ok: false,
      code: 'DOCEX_INPUT_ROWS_INVALID',
      reason: `${bad} of ${built.rows.length} rows of ${indexName} break the payload rules; nothing was sent from this batch`,
      ...(report ? { report } : {}),
    };
  }
  const accepted = new Map(check.accepted.map((a) => [a.row, a]));
  const targets = new Map<number, BatchRowTarget>();
  const rows: RowInput[] = built.rows.map((b, rowIndex) => {
    const label = rowLabel(b.file, b.row);
    const ok = accepted.get(b.row);
    if (ok?.file) {
      targets.set(rowIndex, { file: ok.file, request: ok.request });
      return { rowIndex, label };
    }
    const mine = check.rejected.filter((r) => r.row === b.row);
    return { rowIndex, label, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: rowReason(mine) } };
  });
  return { ok: true, rows, byRow: targets, report };
}
