/**
 * The ten payload rules, run locally on every built row against the workflow record fetched at
 * start-up, so a bad row is reported with its number, rule and column before anything is sent.
 */
import { isoTime } from '../../core/clock.js';
import { escapeCodePoint } from '../../core/escape.js';
import { parseExecutionDate } from '../../core/send-window.js';
import { checkPayloadRules, normalisePayload, type PayloadEndpoint } from '../../domain/payload-rules.js';
import type { PayloadJobRequest, Workflow } from '../../domain/wire.js';
import { executionDateProblem } from './columns.js';
import type {
  AcceptedRow,
  BuiltRow,
  CheckResult,
  OnInvalidRow,
  RowColumns,
  RowProblem,
  RowRejection,
  RowUnit,
} from './types.js';

/** Short names of the specification's payload rules, for reports. */
export const PAYLOAD_RULE_TITLES: Readonly<Record<number, string>> = {
  1: 'workflow',
  2: 'PDF file name',
  3: 'template data',
  4: 'print address',
  5: 'address fields',
  6: 'print address',
  7: 'channel identifiers',
  8: 'payment collection',
  9: 'invoice tracking',
  10: 'encryption',
};

function columnOf(field: string, columns: RowColumns | undefined): string | undefined {
  const m = /^payload\.(channelIdentifiers|extraInfoIdentifiers)\[(\d+)\]/.exec(field);
  if (!m || !columns) return undefined;
  const list = m[1] === 'channelIdentifiers' ? columns.channel : columns.extra;
  return list[Number(m[2])];
}

/**
 * The row's execution date (sendingEventExecutionDateUtc, from any column or JSON key) in UTC, or
 * why it is refused: not ISO 8601 with its offset, or not later than `notBefore` (the time the
 * file was taken: a date already past would be sent at once, not when the ERP asked).
 */
function datedRequest(
  request: PayloadJobRequest,
  columns: RowColumns | undefined,
  notBefore: number | undefined,
): { request: PayloadJobRequest } | { problem: RowProblem } {
  const text = request.sendingEventExecutionDateUtc;
  if (text === undefined) return { request };
  const column = columns?.fields?.['sendingEventExecutionDateUtc'];
  const at = parseExecutionDate(text);
  if (at === undefined) return { problem: executionDateProblem(text, column) };
  if (notBefore !== undefined && at <= notBefore) {
    return {
      problem: {
        rule: 'format',
        field: 'sendingEventExecutionDateUtc',
        ...(column === undefined ? {} : { column }),
        message: `${isoTime(at)} is not later than ${isoTime(notBefore)}, when the file was taken: the row would be sent at once, not then`,
        code: 'DOCEX_INPUT_EXECUTION_DATE',
      },
    };
  }
  return { request: { ...request, sendingEventExecutionDateUtc: isoTime(at) } };
}

export function checkRows(
  rows: readonly BuiltRow[],
  workflow: Workflow,
  endpoint: PayloadEndpoint,
  onInvalidRow: OnInvalidRow = 'reject-file',
  opts: {
    callerDepartmentIds?: readonly string[];
    /** Execution dates must be later than this (epoch ms: when the file was taken). */
    notBefore?: number;
  } = {},
): CheckResult {
  const accepted: AcceptedRow[] = [];
  const rejected: RowRejection[] = [];
  for (const built of rows) {
    const file = built.file === undefined ? {} : { file: built.file };
    if ('problems' in built) {
      for (const p of built.problems) rejected.push({ row: built.row, ...p, ...file });
      continue;
    }
    const dated = datedRequest(built.request, built.columns, opts.notBefore);
    if ('problem' in dated) {
      rejected.push({ row: built.row, ...dated.problem, ...file });
      continue;
    }
    const request = dated.request;
    const violations = checkPayloadRules({
      endpoint,
      request,
      workflow,
      ...(opts.callerDepartmentIds ? { callerDepartmentIds: opts.callerDepartmentIds } : {}),
    });
    if (violations.length === 0) {
      accepted.push({ row: built.row, request: normalisePayload(request), ...file });
      continue;
    }
    for (const v of violations) {
      const column = columnOf(v.field, built.columns);
      rejected.push({
        row: built.row,
        rule: v.rule,
        field: v.field,
        message: v.message,
        ...(column === undefined ? {} : { column }),
        ...file,
      });
    }
  }
  const fileRejected = rejected.length > 0 && (onInvalidRow === 'reject-file' || accepted.length === 0);
  return { accepted: fileRejected ? [] : accepted, rejected, fileRejected };
}

const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;

/**
 * Text taken from a dropped file (a column name, a PDF's name in index.csv, a cell echoed in a
 * message) as a report line shows it: line breaks become spaces, other controls and invisible
 * characters are escaped, so no cell can write a line of its own or reorder the line around it.
 */
export function shownInReport(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(UNSHOWN, escapeCodePoint);
}

/**
 * A plain-text report an operator reads, one line per problem in row order:
 * `row 3: rule 7 (channel identifiers), column "Mail": the EMAIL task needs EMAIL_ADDRESS`.
 */
export function formatRowReport(
  rejected: readonly RowRejection[],
  opts: { fileName?: string; unit?: RowUnit; totalRows?: number; fileRejected?: boolean } = {},
): string {
  const unit = opts.unit ?? 'row';
  const badRows = new Set(rejected.map((r) => r.row)).size;
  const plural = (n: number) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  const of = opts.totalRows === undefined ? plural(badRows) : `${badRows} of ${plural(opts.totalRows)}`;
  const outcome =
    opts.fileRejected === undefined
      ? ''
      : opts.fileRejected
        ? ' Nothing was sent from this file.'
        : ' The other rows were sent.';
  const head = `${opts.fileName ?? 'file'}: ${of} refused.${outcome}`;
  const lines = [...rejected]
    .sort((a, b) => a.row - b.row)
    .map((r) => {
      // The error code of a character check, else the payload rule broken.
      const label =
        r.code ??
        (r.rule === 'format' ? 'format' : `rule ${r.rule} (${PAYLOAD_RULE_TITLES[r.rule] ?? 'payload'})`);
      const where =
        r.column !== undefined
          ? `, column "${shownInReport(r.column)}"`
          : r.field
            ? `, ${shownInReport(r.field)}`
            : '';
      const file = r.file !== undefined ? ` [${shownInReport(r.file)}]` : '';
      return `${unit} ${r.row}${file}: ${label}${where}: ${shownInReport(r.message)}`;
    });
  return [head, ...lines].join('\n') + '\n';
}
