import type { PayloadJobRequest } from '../../domain/wire.js';
import type { InputErrorCode, InputRejection } from '../inspect/codes.js';

/** What a problem breaks: one of the ten payload rules, or the file's own format (a bad cell). */
export type RuleRef = number | 'format';

export interface RowProblem {
  rule: RuleRef;
  /** The request field (`payload.channelIdentifiers[2].value`) or the column of a format problem. */
  field: string;
  message: string;
  /** The column (as the ERP named it) the field came from, when known. */
  column?: string;
  /**
   * The stable code of a problem that has its own (a control character, a repeated JSON key);
   * a row whose problems all share one code is rejected with it, any other with the generic one.
   */
  code?: InputErrorCode;
}

export interface RowRejection extends RowProblem {
  /** Spreadsheet row (CSV, header = row 1), item number (JSON, 1-based) or record number (XML). */
  row: number;
  /** The PDF a payload-pdf batch row names. */
  file?: string;
}

/** Source columns of a built request, by identifier index, to name columns in reports. */
export interface RowColumns {
  channel: string[];
  extra: string[];
  /** Request fields (jobName, sendingEventExecutionDateUtc, …) -> the column each came from. */
  fields?: Readonly<Record<string, string>>;
}

export type BuiltRow =
  | { row: number; request: PayloadJobRequest; file?: string; columns?: RowColumns }
  | { row: number; problems: RowProblem[]; file?: string };

export type RowUnit = 'row' | 'item' | 'record';

/** Requests built from one file, row by row; a file-level problem is an InputRejection instead. */
export type BuildResult = { ok: true; unit: RowUnit; rows: BuiltRow[] } | InputRejection;

/** All-or-nothing by default; `skip` sends the good rows and reports the rest. */
export type OnInvalidRow = 'reject-file' | 'skip';

export interface AcceptedRow {
  row: number;
  /** Normalised (rule 5): empty address fields dropped, country code upper-cased. */
  request: PayloadJobRequest;
  file?: string;
}

export interface CheckResult {
  accepted: AcceptedRow[];
  rejected: RowRejection[];
  /** True when nothing may be sent: a bad row under reject-file, or no good row at all. */
  fileRejected: boolean;
}
