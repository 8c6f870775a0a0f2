/**
 * Every reason a dropped file is refused before anything is sent, with a stable code an operator
 * can grep and a one-line explanation the README lists. Payload building shares the table so a
 * file has one vocabulary from the first byte to the last row.
 */
export const INPUT_ERROR_CODES = {
  DOCEX_INPUT_UNREADABLE: 'The file could not be opened or read (gone, no permission, I/O error).',
  DOCEX_INPUT_NOT_A_FILE: 'The path is a directory, device or socket, not a regular file.',
  DOCEX_INPUT_SYMLINK:
    'The path is a symbolic link; links are refused so a drop cannot point outside its folder.',
  DOCEX_INPUT_HARD_LINK:
    "The file has more than one hard link (it may be any file of the machine, such as the client key); refused unless the folder's allowHardLinks is set.",
  DOCEX_INPUT_BAD_NAME:
    'The file name contains control characters (a newline, tab or NUL), line or paragraph separators or invisible format characters (a right-to-left override), or is not valid UTF-8 (a Latin-1 name).',
  DOCEX_INPUT_EMPTY: 'The file has zero bytes.',
  DOCEX_INPUT_TOO_LARGE: 'The file is over the configured size limit, or too large to be checked.',
  DOCEX_INPUT_TOO_COMPLEX:
    'Checking the file went over an inspection limit (inspection.memory, inspection.timeLimit or one of inspection.limits: PDF inflation, CSV columns or line length, XML elements or attributes, sidecar size), or stopped the inspector; the reason names which.',
  DOCEX_INPUT_UNKNOWN_TYPE: 'The content is not a PDF, ZIP, XML, JSON or CSV file.',
  DOCEX_INPUT_TYPE_MISMATCH: 'The extension says one type and the content (magic bytes) another.',
  DOCEX_INPUT_WRONG_FOR_WORKFLOW: "The file's type is not one the folder's workflow input source takes.",
  DOCEX_INPUT_ENCODING: 'A text file (CSV, XML, JSON) is not valid UTF-8.',
  DOCEX_INPUT_PDF_CORRUPT: 'The PDF cannot be parsed.',
  DOCEX_INPUT_PDF_TRUNCATED: 'The PDF has no %%EOF marker at its end: it was cut short.',
  DOCEX_INPUT_PDF_ENCRYPTED: 'The PDF is encrypted or password-protected.',
  DOCEX_INPUT_PDF_EMPTY: 'The PDF has no pages.',
  DOCEX_INPUT_CSV_MALFORMED: 'The CSV cannot be parsed (unterminated quotes, no header).',
  DOCEX_INPUT_CSV_RAGGED: 'Some CSV rows have a different number of fields than the header.',
  DOCEX_INPUT_NO_RECORDS: 'The file parses but holds no data row, record or document.',
  DOCEX_INPUT_XML_DTD:
    'The XML has a DOCTYPE or ENTITY declaration, refused (entity bombs, external entities).',
  DOCEX_INPUT_XML_MALFORMED: 'The XML is not well-formed.',
  DOCEX_INPUT_NOT_UBL: 'The XML is not a UBL invoice or credit note with number, date, sender and receiver.',
  DOCEX_INPUT_UNSAFE_KEY:
    'A data.<path> column, JSON key or XML element is named __proto__, constructor or prototype: names that could reach every object of the agent are refused.',
  DOCEX_INPUT_JSON_MALFORMED:
    'The JSON cannot be parsed, is not an object or array of objects, or nests more than 100 levels deep.',
  DOCEX_INPUT_JSON_NUMBER:
    'A JSON number cannot be kept exactly (more significant digits than a double holds, or out of range); write it as a string.',
  DOCEX_INPUT_ZIP_CORRUPT: 'The ZIP cannot be read.',
  DOCEX_INPUT_ZIP_EMPTY: 'The ZIP holds no file.',
  DOCEX_INPUT_ZIP_UNSAFE_PATH: 'A ZIP entry name is absolute, climbs out with "..", or has a backslash.',
  DOCEX_INPUT_ZIP_SYMLINK: 'A ZIP entry is a symbolic link.',
  DOCEX_INPUT_ZIP_ENCRYPTED: 'A ZIP entry is encrypted.',
  DOCEX_INPUT_ZIP_NESTED: 'A ZIP entry is itself an archive.',
  DOCEX_INPUT_ZIP_BOMB:
    'A ZIP entry expands more than the allowed ratio, or all entries more than the allowed total.',
  DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES: 'The ZIP has more entries than allowed.',
  DOCEX_INPUT_ZIP_ENTRY_TYPE:
    "A ZIP entry is not of the type the workflow takes (e.g. not a PDF in a PDF workflow's ZIP).",
  DOCEX_INPUT_PAYLOAD_COLUMNS: 'A payload CSV or XML mapping names an unknown or conflicting column.',
  DOCEX_INPUT_PAYLOAD_MAPPING: 'The per-folder XML mapping does not fit the file (record element not found).',
  DOCEX_INPUT_BATCH_INDEX:
    'A payload-pdf batch lacks index.csv, or index.csv and the PDFs do not match one to one.',
  DOCEX_INPUT_ROWS_INVALID:
    'One or more rows break the payload rules; the whole file is refused (onInvalidRow: reject-file).',
} as const;

export type InputErrorCode = keyof typeof INPUT_ERROR_CODES;

/**
 * Codes a file still being written or chmod-ed can show (field notes: producers that chmod after
 * writing leave a short empty or unreadable window). Worth one recheck after the settle time
 * before the file is refused for good.
 */
export const MAYBE_TRANSIENT_INPUT_CODES: ReadonlySet<InputErrorCode> = new Set([
  'DOCEX_INPUT_UNREADABLE',
  'DOCEX_INPUT_EMPTY',
  'DOCEX_INPUT_PDF_TRUNCATED',
  'DOCEX_INPUT_ZIP_CORRUPT',
]);

/** A refused file: a code and one sentence naming the file and what is wrong. */
export interface InputRejection {
  ok: false;
  code: InputErrorCode;
  reason: string;
  details?: Record<string, unknown>;
}

export function reject(
  code: InputErrorCode,
  reason: string,
  details?: Record<string, unknown>,
): InputRejection {
  return details === undefined ? { ok: false, code, reason } : { ok: false, code, reason, details };
}

/** Keys that reach an object's prototype when assigned: never taken from a dropped file. */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export const isUnsafeKey = (key: string): boolean => UNSAFE_KEYS.has(key);

/**
 * A file name as it appears in a reason: quoted, with newlines and other controls escaped, and
 * invisible format characters (a right-to-left override) too, so a reason reads as it is.
 */
export function quoteName(name: string): string {
  return JSON.stringify(name).replace(/[\u007f-\u009f\u2028\u2029\p{Cf}]/gu, (c) => {
    const cp = c.codePointAt(0) as number;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

export function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return m >= 10 || Number.isInteger(m) ? `${Math.round(m)} MiB` : `${m.toFixed(1)} MiB`;
}
