/**
 * Each code's outcome (core/error-codes.ts) is what the retry policy, the intake's service calls
 * and the SFTP download count read. Before outcomes they kept code lists of their own: the retry
 * policy's waiting and internal sets and its /^DOCEX_INPUT_/ pattern, classifyFailure's two
 * refusing codes and the SFTP source's SERVER_FAILURES. The table below is what that logic answered
 * for every code declared then, computed from it before it was removed; the outcomes must answer
 * the same. A code added since needs no row: its outcome is its one classification.
 */
import { describe, expect, it } from 'vitest';
import { API_STATUS_CODE, ERROR_CODES, ERROR_OUTCOMES, outcomeOf } from '../../src/core/error-codes.js';
import { DocexError } from '../../src/core/errors.js';
import { type FailureClass, failureClass } from '../../src/domain/retry-policy.js';
import { classifyFailure, type FailureOutcome } from '../../src/pipeline/retry-policy.js';
import { countsAgainstFile } from '../../src/sources/sftp/source.js';

type Kind = FailureOutcome['kind'];
/** code, retry class, classifyFailure at create, at upload, an SFTP failure that says nothing of the file. */
const BEFORE_OUTCOMES: [string, FailureClass, Kind, Kind, boolean][] = [
  ['DOCEX_AUTH_TOKEN', 'transient', 'retry', 'retry', false],
  ['DOCEX_TLS', 'transient', 'retry', 'retry', false],
  ['DOCEX_FILE_BLOCKED', 'transient', 'retry', 'retry', false],
  ['DOCEX_SERVICE_UNREACHABLE', 'transient', 'retry', 'retry', false],
  ['DOCEX_NETWORK', 'transient', 'retry', 'retry', false],
  ['DOCEX_UPLOAD_EXPIRED', 'transient', 'recreate', 'recreate', false],
  ['DOCEX_UPLOAD_MAYBE_DONE', 'transient', 'check-job', 'check-job', false],
  ['DOCEX_UPLOAD_ETAG_MISMATCH', 'transient', 'retry', 'retry', false],
  ['DOCEX_DOWNLOAD_SIZE_MISMATCH', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_READ', 'transient', 'reject', 'reject', false],
  ['DOCEX_SOURCE_CHANGED', 'transient', 'reject', 'reject', false],
  ['DOCEX_LOCAL_IO', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESPONSE_INVALID', 'internal', 'retry', 'retry', false],
  ['DOCEX_INVALID_ARGUMENT', 'transient', 'retry', 'retry', false],
  ['DOCEX_UBL_INVALID', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_FILE', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_YAML', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_ENV', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_SECRET_PERMISSIONS', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_INVALID', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_MODE', 'transient', 'retry', 'retry', false],
  ['DOCEX_FOLDER_WORKFLOW', 'transient', 'retry', 'retry', false],
  ['DOCEX_FOLDER_UNSAFE', 'transient', 'retry', 'retry', false],
  ['DOCEX_SUBMIT_MODE', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_FOLDER_MISSING', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_GLOB_INVALID', 'transient', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_LOCKED', 'transient', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_VERSION', 'transient', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_UNAVAILABLE', 'waiting', 'retry', 'retry', false],
  ['DOCEX_CLI_USAGE', 'transient', 'retry', 'retry', false],
  ['DOCEX_CONFIG_CREDENTIAL', 'transient', 'retry', 'retry', false],
  ['DOCEX_CREDENTIALS', 'transient', 'retry', 'retry', false],
  ['DOCEX_RETURNS_STORE_VERSION', 'transient', 'retry', 'retry', false],
  ['DOCEX_INBOX_VERSION', 'transient', 'retry', 'retry', false],
  ['DOCEX_WEBHOOK_LISTEN', 'transient', 'retry', 'retry', false],
  ['DOCEX_OPS_LISTEN', 'transient', 'retry', 'retry', false],
  ['DOCEX_DUPLICATE', 'transient', 'retry', 'retry', false],
  ['DOCEX_PAYLOAD_ROW_INVALID', 'transient', 'retry', 'retry', false],
  ['DOCEX_REJECTED', 'transient', 'retry', 'retry', false],
  ['DOCEX_UPLOAD_WINDOW', 'transient', 'retry', 'retry', false],
  ['DOCEX_CREATE_UNANSWERED', 'transient', 'retry', 'retry', false],
  ['DOCEX_UPLOAD_PENDING', 'waiting', 'retry', 'retry', false],
  ['DOCEX_INPUT_SIDECAR_MISSING', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_SIDECAR_ORPHAN', 'internal', 'retry', 'retry', false],
  ['DOCEX_BATCH_PENDING', 'waiting', 'retry', 'retry', false],
  ['DOCEX_SIDECAR_PENDING', 'waiting', 'retry', 'retry', false],
  ['DOCEX_SOURCE_LOST', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_CLAIM_CHANGED', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_CLAIM_FAILED', 'transient', 'retry', 'retry', false],
  ['DOCEX_SOURCE_FILE_UNREADABLE', 'transient', 'retry', 'retry', false],
  ['DOCEX_PLACE_FAILED', 'transient', 'retry', 'retry', false],
  ['DOCEX_STOPPING', 'waiting', 'retry', 'retry', false],
  ['DOCEX_INTERNAL', 'internal', 'retry', 'retry', false],
  ['DOCEX_PARKED', 'transient', 'retry', 'retry', false],
  ['DOCEX_LEASE_LOST', 'transient', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_TRANSITION', 'internal', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_FIELDS', 'internal', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_ROWS', 'internal', 'retry', 'retry', false],
  ['DOCEX_JOURNAL_UNKNOWN_ITEM', 'internal', 'retry', 'retry', false],
  ['DOCEX_OUTPUT_PATH', 'transient', 'retry', 'retry', false],
  ['DOCEX_OUTPUT_WRITE', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESEND_NOT_FINAL', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESEND_OF_RESEND', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESEND_REFUSED', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESEND_DONE', 'transient', 'retry', 'retry', false],
  ['DOCEX_RESEND_UNANSWERED', 'transient', 'retry', 'retry', false],
  ['DOCEX_WEBHOOK_SECRET', 'transient', 'retry', 'retry', false],
  ['DOCEX_WEBHOOK_TEST_FAILED', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_HOST_KEY', 'transient', 'retry', 'retry', true],
  ['DOCEX_SFTP_AUTH', 'transient', 'retry', 'retry', true],
  ['DOCEX_SFTP_CONNECT', 'transient', 'retry', 'retry', true],
  ['DOCEX_SFTP_NOT_FOUND', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_PERMISSION', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_IO', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_RENAME_REFUSED', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_TARGET_EXISTS', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_SIZE_MISMATCH', 'transient', 'retry', 'retry', false],
  ['DOCEX_SFTP_DOWNLOAD_FAILED', 'transient', 'retry', 'retry', false],
  ['DOCEX_INPUT_UNREADABLE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_POISON', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_NOT_A_FILE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_SYMLINK', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_HARD_LINK', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_BAD_NAME', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_EMPTY', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_TOO_LARGE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_TOO_COMPLEX', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_UNKNOWN_TYPE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_TYPE_MISMATCH', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_WRONG_FOR_WORKFLOW', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ENCODING', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PDF_CORRUPT', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PDF_TRUNCATED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PDF_ENCRYPTED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PDF_EMPTY', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_CSV_MALFORMED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_CSV_RAGGED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_NO_RECORDS', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_XML_DTD', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_XML_MALFORMED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_NOT_UBL', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_UNSAFE_KEY', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_JSON_MALFORMED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_JSON_NUMBER', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_JSON_DUPLICATE_KEY', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_CONTROL_CHARACTER', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_INVISIBLE_CHARACTER', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_CORRUPT', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_EMPTY', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_UNSAFE_PATH', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_SYMLINK', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_BAD_NAME', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_NOT_A_FILE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_DUPLICATE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_ENCRYPTED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_NESTED', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_BOMB', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ZIP_ENTRY_TYPE', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PAYLOAD_COLUMNS', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_PAYLOAD_MAPPING', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_BATCH_INDEX', 'internal', 'retry', 'retry', false],
  ['DOCEX_INPUT_ROWS_INVALID', 'internal', 'retry', 'retry', false],
  ['DOCEX_API_400', 'transient', 'retry', 'retry', false],
  ['DOCEX_API_503', 'transient', 'retry', 'retry', false],
  ['DOCEX_NOT_DECLARED', 'transient', 'retry', 'retry', false],
];

describe('error outcomes answer what the code lists answered before them', () => {
  it('the table holds each code once, DOCEX_API_<status> and an undeclared code among them', () => {
    const inTable = BEFORE_OUTCOMES.map(([code]) => code);
    expect(new Set(inTable).size).toBe(inTable.length);
    expect(inTable).toEqual(expect.arrayContaining(['DOCEX_API_503', 'DOCEX_NOT_DECLARED']));
  });

  it.each(BEFORE_OUTCOMES)(
    '%s: retry class %s, at create %s, at upload %s, says nothing of the file %s',
    (code, retry, create, upload, server) => {
      const err = new DocexError(code as never, 'x');
      expect(failureClass(code)).toBe(retry);
      expect(classifyFailure(err, 'create').kind).toBe(create);
      expect(classifyFailure(err, 'upload').kind).toBe(upload);
      expect(countsAgainstFile(code)).toBe(!server);
    },
  );

  it('gives every declared code and DOCEX_API_<status> an outcome of the closed set, and none to other text', () => {
    for (const info of [...Object.values(ERROR_CODES), API_STATUS_CODE]) {
      expect(Object.keys(ERROR_OUTCOMES)).toContain(info.outcome);
    }
    expect(outcomeOf('DOCEX_API_409')).toBe(API_STATUS_CODE.outcome);
    expect(outcomeOf('DOCEX_NOT_DECLARED')).toBeUndefined();
    expect(outcomeOf('constructor')).toBeUndefined();
  });
});
