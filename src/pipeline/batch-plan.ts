/**
 * A payload-pdf batch cut into its rows: index.csv built against the batch's PDFs, every row
 * checked against the ten payload rules, numbered by position (the journal's rowIndex). Pure: the
 * same bytes give the same plan, so a restart rebuilds exactly the rows the journal recorded.
 */
import type { PayloadJobRequest, Workflow } from '../domain/wire.js';
import { type BuildResult, checkRows, type OnInvalidRow } from './payload/index.js';
import { planRows, type RowsPlan } from './rows-plan.js';

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
  /** Execution dates must be later than this (epoch ms: when the batch was taken). */
  notBefore?: number;
}

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
  const check = checkRows(
    built.rows,
    input.workflow,
    'payload-pdf',
    input.onInvalidRow,
    input.notBefore === undefined ? {} : { notBefore: input.notBefore },
  );
  return planRows(built, check, {
    reportName: `${batchName} ${indexName}`,
    fileReason: (bad) =>
      `${bad} of ${built.rows.length} rows of ${indexName} break the payload rules; nothing was sent from this batch`,
    label: (row) => `${row.file ?? '(no file)'} (row ${row.row})`,
    target: (accepted) => (accepted.file ? { file: accepted.file, request: accepted.request } : undefined),
    reasonNamesColumns: false,
  });
}
