/**
 * From checked rows to the plan of a file of rows (payload-word) or of a batch (payload-pdf): the
 * rows to journal, numbered by position (the journal's rowIndex), what each sendable row sends,
 * and the report of rejected rows; or the whole file rejected. Pure.
 */
import type { ErrorCode } from '../core/error-codes.js';
import type { RowInput } from '../journal/index.js';
import {
  type AcceptedRow,
  type BuiltRow,
  type CheckResult,
  formatRowReport,
  type RowRejection,
  type RowUnit,
  sharedCode,
  shownInReport,
} from './payload/index.js';

/**
 * A file's rows before any job exists: the rows to journal and what each sendable row sends (by
 * rowIndex), with the report of rejected rows (onInvalidRow: skip); or the whole file rejected.
 */
export type RowsPlan<Target> =
  | { ok: true; rows: RowInput[]; byRow: Map<number, Target>; report: string | undefined }
  | { ok: false; code: ErrorCode; reason: string; report?: string };

export interface RowsPlanParts<Target> {
  /** The name the report opens with (`orders.csv`, `batch.zip index.csv`). */
  reportName: string;
  /** The reason when the whole file is rejected, from the number of bad rows. */
  fileReason: (badRows: number) => string;
  /** The journal's label of a row (`row 3`, `a.pdf (row 3)`). */
  label: (row: BuiltRow) => string;
  /** What an accepted row sends; undefined keeps it from being sent. */
  target: (accepted: AcceptedRow) => Target | undefined;
  /** Whether a row's reason names the ERP's column of each problem. */
  reasonNamesColumns: boolean;
}

function rowReason(rejections: readonly RowRejection[], namesColumns: boolean): string {
  return rejections
    .map((r) => {
      const column = namesColumns && r.column ? ` (column ${shownInReport(r.column)})` : '';
      const what = r.code ?? (r.rule === 'format' ? 'format' : `rule ${r.rule}`);
      return `${what}${column}: ${shownInReport(r.message)}`;
    })
    .join('; ');
}

export function planRows<Target>(
  built: { unit: RowUnit; rows: readonly BuiltRow[] },
  check: CheckResult,
  parts: RowsPlanParts<Target>,
): RowsPlan<Target> {
  const report =
    check.rejected.length === 0
      ? undefined
      : formatRowReport(check.rejected, {
          fileName: parts.reportName,
          unit: built.unit,
          totalRows: built.rows.length,
          fileRejected: check.fileRejected,
        });
  if (check.fileRejected) {
    const bad = new Set(check.rejected.map((r) => r.row)).size;
    return {
      ok: false,
      // One class of problem (control characters, say) names itself; a mix is the generic code.
      code: sharedCode(check.rejected, 'DOCEX_INPUT_ROWS_INVALID'),
      reason: parts.fileReason(bad),
      ...(report ? { report } : {}),
    };
  }
  const accepted = new Map(check.accepted.map((a) => [a.row, a]));
  const targets = new Map<number, Target>();
  const rows: RowInput[] = built.rows.map((b, rowIndex) => {
    const label = parts.label(b);
    const ok = accepted.get(b.row);
    const target = ok ? parts.target(ok) : undefined;
    if (target !== undefined) {
      targets.set(rowIndex, target);
      return { rowIndex, label };
    }
    const mine = check.rejected.filter((r) => r.row === b.row);
    return {
      rowIndex,
      label,
      rejected: {
        code: sharedCode(mine, 'DOCEX_PAYLOAD_ROW_INVALID'),
        reason: rowReason(mine, parts.reasonNamesColumns),
      },
    };
  });
  return { ok: true, rows, byRow: targets, report };
}
