export {
  INPUT_ERROR_CODES,
  type InputErrorCode,
  type InputRejection,
  MAYBE_TRANSIENT_INPUT_CODES,
  quoteName,
  reject,
} from './codes.js';
export {
  CSV_DELIMITERS,
  type CsvRecord,
  guessDelimiter,
  inspectCsvBytes,
  type ParsedCsv,
  parseCsv,
} from './csv.js';
export { type DetectedType, detectType, HEAD_BYTES } from './detect-type.js';
export {
  ACCEPTED_EXTENSIONS,
  DEFAULT_INSPECT_LIMITS,
  type InputKind,
  type Inspection,
  type InspectLimits,
  type InspectOptions,
  inspectFile,
} from './inspect-file.js';
export { checkJsonDepth, inspectJsonBytes, jsonNestingDepth, MAX_JSON_DEPTH, parseJsonText } from './json.js';
export { checkPdfBytes, inspectPdfFile, PDF_PARSE_MAX_BYTES, type PdfDetails } from './pdf.js';
export { decodeUtf8 } from './text.js';
export {
  checkXmlText,
  inspectXmlBytes,
  parseSafeXml,
  rootOf,
  SAFE_XML_OPTIONS,
  type XmlNode,
} from './xml.js';
export {
  DEFAULT_ZIP_LIMITS,
  inspectZipFile,
  type ZipDetails,
  type ZipEntryPolicy,
  type ZipLimits,
} from './zip.js';
export { zipPolicy } from './zip-policies.js';
