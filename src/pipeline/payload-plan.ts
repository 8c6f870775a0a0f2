/**
 * A payload-word file cut into its job requests: built with the folder's mapping, checked against
 * the ten payload rules locally, and numbered by position (the journal's rowIndex). Rebuilt the
 * same way after a restart, since the journal keeps row states, not request bodies.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { PayloadJobRequest } from '../domain/wire.js';
import type { JournalItem, RowInput } from '../journal/index.js';
import {
  type BuildResult,
  checkRows,
  formatRowReport,
  payloadRequestsFromCsv,
  payloadRequestsFromJson,
  payloadRequestsFromXml,
  type RowRejection,
} from './payload/index.js';
import type { FolderRuntime } from './types.js';

/**
 * A file's rows before any job exists: the rows to journal and what each sendable row sends (by
 * rowIndex), with the report of refused rows (onInvalidRow: skip); or the whole file refused.
 */
export type RowsPlan<Target> =
  | { ok: true; rows: RowInput[]; byRow: Map<number, Target>; report: string | undefined }
  | { ok: false; code: string; reason: string; report?: string };

export type PayloadPlan = RowsPlan<PayloadJobRequest>;

function build(rt: FolderRuntime, item: JournalItem, bytes: Buffer): BuildResult {
  const { workflowId, fileName } = item;
  const ext = path.extname(fileName).toLowerCase();
  const mapping = rt.config.mapping;
  if (ext === '.csv') {
    const columns = mapping?.csv?.columns;
    return payloadRequestsFromCsv(bytes, {
      workflowId,
      fileName,
      ...(columns && Object.keys(columns).length > 0 ? { mapping: columns } : {}),
    });
  }
  if (ext === '.json') return payloadRequestsFromJson(bytes, { workflowId, fileName });
  if (ext === '.xml' && mapping?.xml) {
    return payloadRequestsFromXml(
      bytes,
      { record: mapping.xml.recordPath, fields: mapping.xml.fields },
      { workflowId, fileName },
    );
  }
  return {
    ok: false,
    code: 'DOCEX_INPUT_PAYLOAD_MAPPING',
    reason: `${JSON.stringify(fileName)}: an XML payload file needs mapping.xml (recordPath, fields) on folder ${rt.config.name}.`,
  };
}

function rowReason(rejections: readonly RowRejection[]): string {
  return rejections
    .map(
      (r) =>
        `${r.rule === 'format' ? 'format' : `rule ${r.rule}`}${r.column ? ` (column ${r.column})` : ''}: ${r.message}`,
    )
    .join('; ');
}

export async function planPayload(rt: FolderRuntime, item: JournalItem): Promise<PayloadPlan> {
  const built = build(rt, item, await readFile(item.claimedPath!));
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
