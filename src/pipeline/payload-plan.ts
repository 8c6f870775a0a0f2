/**
 * A payload-word file cut into its job requests: built with the folder's mapping, checked against
 * the ten payload rules locally, and numbered by position (the journal's rowIndex). Rebuilt the
 * same way after a restart, since the journal keeps row states, not request bodies.
 */
import type { ErrorCode } from '../core/error-codes.js';
import type { PayloadJobRequest } from '../domain/wire.js';
import type { JournalItem, RowInput } from '../journal/index.js';
import { checkRows, formatRowReport, type RowRejection } from './payload/index.js';
import type { FolderRuntime, StepContext } from './types.js';

/**
 * A file's rows before any job exists: the rows to journal and what each sendable row sends (by
 * rowIndex), with the report of refused rows (onInvalidRow: skip); or the whole file refused.
 */
export type RowsPlan<Target> =
  | { ok: true; rows: RowInput[]; byRow: Map<number, Target>; report: string | undefined }
  | { ok: false; code: ErrorCode; reason: string; report?: string };

export type PayloadPlan = RowsPlan<PayloadJobRequest>;

function rowReason(rejections: readonly RowRejection[]): string {
  return rejections
    .map(
      (r) =>
        `${r.rule === 'format' ? 'format' : `rule ${r.rule}`}${r.column ? ` (column ${r.column})` : ''}: ${r.message}`,
    )
    .join('; ');
}

export async function planPayload(
  ctx: StepContext,
  rt: FolderRuntime,
  item: JournalItem,
): Promise<PayloadPlan> {
  const mapping = rt.config.mapping;
  const built = await ctx.inspector.run('buildPayloadFile', item.fileName, {
    filePath: item.claimedPath!,
    fileName: item.fileName,
    workflowId: item.workflowId,
    folder: rt.config.name,
    csvColumns: mapping?.csv?.columns,
    xml: mapping?.xml ? { record: mapping.xml.recordPath, fields: mapping.xml.fields } : undefined,
  });
  if (!built.ok) return { ok: false, code: built.code, reason: built.reason };
  const check = checkRows(built.rows, rt.workflow, 'payload-word', rt.config.onInvalidRow);
  const report =
    check.rejected.length === 0
      ? undefined
      : formatRowReport(check.rejected, {
          fileName: item.fileName,
          unit: built.unit,
          totalRows: built.rows.length,
          fileRejected: check.fileRejected,
        });
  if (check.fileRejected) {
    const bad = new Set(check.rejected.map((r) => r.row)).size;
    return {
      ok: false,
      code: 'DOCEX_INPUT_ROWS_INVALID',
      reason: `${bad} of ${built.rows.length} ${built.unit}s break the payload rules; nothing was sent from this file`,
      ...(report ? { report } : {}),
    };
  }
  const accepted = new Map(check.accepted.map((a) => [a.row, a.request]));
  const requests = new Map<number, PayloadJobRequest>();
  const rows: RowInput[] = built.rows.map((b, rowIndex) => {
    const request = accepted.get(b.row);
    const label = `${built.unit} ${b.row}`;
    if (request) {
      requests.set(rowIndex, request);
      return { rowIndex, label };
    }
    const mine = check.rejected.filter((r) => r.row === b.row);
    return { rowIndex, label, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: rowReason(mine) } };
  });
  return { ok: true, rows, byRow: requests, report };
}
