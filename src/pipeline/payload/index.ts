export { checkRows, formatRowReport, PAYLOAD_RULE_TITLES, shownInReport } from './check-rows.js';
export { buildRow, type ColumnMapping, type ColumnPlan, planColumns } from './columns.js';
export {
  type CsvRequestOptions,
  type IndexCsvOptions,
  payloadPdfBatchFromIndexCsv,
  payloadRequestsFromCsv,
} from './csv-requests.js';
export { type JsonRequestOptions, payloadPdfFromSidecar, payloadRequestsFromJson } from './json-requests.js';
export { sharedCode, textProblemsOf } from './row-text.js';
export type {
  AcceptedRow,
  BuildResult,
  BuiltRow,
  CheckResult,
  OnInvalidRow,
  RowColumns,
  RowProblem,
  RowRejection,
  RowUnit,
  RuleRef,
} from './types.js';
export { payloadRequestsFromXml, type XmlPayloadMapping, type XmlRequestOptions } from './xml-requests.js';
