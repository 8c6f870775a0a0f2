/**
 * A payload-word file cut into its job requests: built with the folder's mapping, checked against
 * the ten payload rules locally, and numbered by position (the journal's rowIndex). Rebuilt the
 * same way after a restart, since the journal keeps row states, not request bodies.
 */
import type { PayloadJobRequest } from '../domain/wire.js';
import type { JournalItem } from '../journal/index.js';
import { checkRows } from './payload/index.js';
import { payloadOptionsOf, workflowOf } from './routes.js';
import { planRows, type RowsPlan } from './rows-plan.js';
import type { FolderRuntime, StepContext } from './types.js';

export type PayloadPlan = RowsPlan<PayloadJobRequest>;

export async function planPayload(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
): Promise<PayloadPlan> {
  // A route's own mapping and row rule, when the file's route has them.
  const { mapping, onInvalidRow } = payloadOptionsOf(runtime, item);
  const built = await ctx.inspector.run('buildPayloadFile', item.fileName, {
    filePath: item.claimedPath!,
    fileName: item.fileName,
    workflowId: item.workflowId,
    folder: runtime.config.name,
    csvColumns: mapping?.csv?.columns,
    xml: mapping?.xml ? { record: mapping.xml.recordPath, fields: mapping.xml.fields } : undefined,
  });
  if (!built.ok) return { ok: false, code: built.code, reason: built.reason };
  // Execution dates are judged against the claim, so a restart rebuilds the same rows.
  const check = checkRows(built.rows, workflowOf(runtime, item.workflowId), 'payload-word', onInvalidRow, {
    notBefore: item.createdAt,
  });
  return planRows(built, check, {
    reportName: item.fileName,
    fileReason: (bad) =>
      `${bad} of ${built.rows.length} ${built.unit}s break the payload rules; nothing was sent from this file`,
    label: (row) => `${built.unit} ${row.row}`,
    target: (accepted) => accepted.request,
    reasonNamesColumns: true,
  });
}
