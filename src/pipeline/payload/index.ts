export { checkRows, formatRowReport, shownInReport } from './check-rows.js';
export { payloadPdfBatchFromIndexCsv, payloadRequestsFromCsv } from './csv-requests.js';
export { payloadPdfFromSidecar, payloadRequestsFromJson } from './json-requests.js';
export { sharedCode } from './row-text.js';
export type {
  AcceptedRow,
  BuildResult,
  BuiltRow,
  CheckResult,
  OnInvalidRow,
  RowRejection,
  RowUnit,
} from './types.js';
export { payloadRequestsFromXml } from './xml-requests.js';
