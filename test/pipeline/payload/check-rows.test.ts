import { describe, expect, it } from 'vitest';
import { checkRows, formatRowReport } from '../../../src/pipeline/payload/check-rows.js';
import {
  payloadPdfBatchFromIndexCsv,
  payloadRequestsFromCsv,
} from '../../../src/pipeline/payload/csv-requests.js';
import type { BuiltRow } from '../../../src/pipeline/payload/types.js';
import { EMAIL_WORD, PRINT_PDF_POM, PRINT_WORD, workflow } from './workflows.js';

function built(csv: string, fileName = 'letters.csv', mapping?: Record<string, string | null>): BuiltRow[] {
  const res = payloadRequestsFromCsv(csv, { workflowId: 'wf', fileName, ...(mapping ? { mapping } : {}) });
  if (!res.ok) throw new Error(res.reason);
  return res.rows;
}

// Row 2 good; row 3 misses the postal code (rule 6) and has a 3-letter country (rule 5);
// row 4 uses ADDRESS on a print workflow (rule 4) with a name only (rule 6); row 5 is good once normalised.
const PRINT_CSV =
  'Naam;Straat;Nr;Postcode;Stad;Land;ADDRESS;data.ref\r\n' +
  'Marie Dupont;Rue de Rivoli;12;75001;Paris;fr;;R1\r\n' +
  'Jean Martin;Rue Neuve;3;;Lyon;FRA;;R2\r\n' +
  'Paul Durand;;;;;;1 Rue X, Paris;R3\r\n' +
  'Acme SA;Avenue Foch;7;75016;Paris;FR;;R4\r\n';
const PRINT_MAPPING = {
  Naam: 'ADDRESS_COMPANY_NAME',
  Straat: 'ADDRESS_STREET',
  Nr: 'ADDRESS_STREET_NUMBER',
  Postcode: 'ADDRESS_POSTAL_CODE',
  Stad: 'ADDRESS_CITY',
  Land: 'ADDRESS_COUNTRY_CODE',
};

describe('checkRows', () => {
  it('refuses the whole file for one bad row by default, listing every bad row', () => {
    const res = checkRows(built(PRINT_CSV, 'letters.csv', PRINT_MAPPING), PRINT_WORD, 'payload-word');
    expect(res.fileRejected).toBe(true);
    expect(res.accepted).toEqual([]);
    expect(res.rejected.map((r) => [r.row, r.rule])).toEqual([
      [3, 5],
      [3, 6],
      [4, 4],
      [4, 6],
      [4, 6],
    ]);
    // The empty postal code adds no identifier, so the country is index 4 of the request as sent.
    expect(res.rejected[0]).toMatchObject({ column: 'Land', field: 'payload.channelIdentifiers[4].value' });
  });

  it('sends the good rows and reports the rest with onInvalidRow skip, normalising what it accepts', () => {
    const res = checkRows(built(PRINT_CSV, 'letters.csv', PRINT_MAPPING), PRINT_WORD, 'payload-word', 'skip');
    expect(res.fileRejected).toBe(false);
    expect(res.accepted.map((a) => a.row)).toEqual([2, 5]);
    const country = res.accepted[0]?.request.payload.channelIdentifiers.find(
      (c) => c.kind === 'ADDRESS_COUNTRY_CODE',
    );
    expect(country?.value).toBe('FR');
    expect(new Set(res.rejected.map((r) => r.row))).toEqual(new Set([3, 4]));
  });

  it('refuses the file under skip too when no row is good', () => {
    const res = checkRows(built('EMAIL_ADDRESS;extra.a\n;1\n;2\n'), EMAIL_WORD, 'payload-word', 'skip');
    expect(res).toMatchObject({ fileRejected: true, accepted: [] });
    expect(res.rejected.map((r) => [r.row, r.rule, r.message])).toEqual([
      [2, 7, 'the EMAIL task needs EMAIL_ADDRESS'],
      [3, 7, 'the EMAIL task needs EMAIL_ADDRESS'],
    ]);
  });

  it('carries format problems of the build into the rejections', () => {
    const res = checkRows(
      built('EMAIL_ADDRESS;encrypt.EMAIL_ADDRESS\na@x.be;perhaps\nb@x.be;no\n'),
      EMAIL_WORD,
      'payload-word',
      'skip',
    );
    expect(res.accepted.map((a) => a.row)).toEqual([3]);
    expect(res.rejected).toEqual([
      {
        row: 2,
        rule: 'format',
        field: 'encrypt.EMAIL_ADDRESS',
        column: 'encrypt.EMAIL_ADDRESS',
        message: '"perhaps" is not a yes/no value',
      },
    ]);
  });

  it('checks rule 10 (encryption on a kind that does not support it) and rule 1 (wrong endpoint)', () => {
    const rows = built('EMAIL_ADDRESS;PHONE_NUMBER;encrypt.PHONE_NUMBER\na@x.be;+32 2 123;yes\n');
    expect(checkRows(rows, EMAIL_WORD, 'payload-word').rejected).toMatchObject([
      { row: 2, rule: 10, column: 'PHONE_NUMBER', field: 'payload.channelIdentifiers[1].mustBeEncrypted' },
    ]);
    expect(checkRows(built('EMAIL_ADDRESS\na@x.be\n'), EMAIL_WORD, 'payload-pdf').rejected).toMatchObject([
      { row: 2, rule: 1 },
    ]);
  });

  it('checks rules 8 and 9 (payment collection, invoice tracking)', () => {
    const tracking = workflow('wf_dp', 'PAYLOAD_WORD', ['DOCPORTAL'], { tracking: true });
    const rows = built('DOCPORTAL_TOKEN_SET_VALUE1;DOCPORTAL_TOKEN_SET_VALUE2;INVOICE_AMOUNT\nt1;t2;10\n');
    expect(checkRows(rows, tracking, 'payload-word').rejected).toMatchObject([
      {
        rule: 9,
        message: 'invoice tracking needs INVOICE_REFERENCE, INVOICE_DUE_DATE, INVOICE_COMMUNICATION',
      },
    ]);
  });

  it('checks a payload-pdf batch (rules 2, 6, 8), keeping each row tied to its PDF', () => {
    const index =
      'file;ADDRESS_COMPANY_NAME;ADDRESS_PO_BOX;ADDRESS_POSTAL_CODE;ADDRESS_CITY;ADDRESS_COUNTRY_CODE;INVOICE_AMOUNT;INVOICE_DUE_DATE;INVOICE_COMMUNICATION;filename\r\n' +
      'a.pdf;Acme NV;PB 12;1000;Brussels;BE;10.00;2026-12-31;+++090/9337/55493+++;\r\n' +
      'b.pdf;Beta BV;PB 13;1000;Brussels;BE;;;;b.docx\r\n';
    const res = payloadPdfBatchFromIndexCsv(index, {
      workflowId: PRINT_PDF_POM.id,
      pdfFiles: ['a.pdf', 'b.pdf'],
    });
    if (!res.ok) throw new Error(res.reason);
    const checked = checkRows(res.rows, PRINT_PDF_POM, 'payload-pdf', 'skip');
    expect(checked.accepted).toMatchObject([{ row: 2, file: 'a.pdf', request: { filename: 'a.pdf' } }]);
    expect(checked.rejected.map((r) => [r.row, r.file, r.rule])).toEqual([
      [3, 'b.pdf', 2],
      [3, 'b.pdf', 8],
    ]);
  });
});

describe('formatRowReport', () => {
  it('writes one line per problem with row, rule and column, in row order', () => {
    const res = checkRows(built(PRINT_CSV, 'letters.csv', PRINT_MAPPING), PRINT_WORD, 'payload-word');
    const report = formatRowReport(res.rejected, {
      fileName: 'letters.csv',
      totalRows: 4,
      fileRejected: res.fileRejected,
    });
    expect(report).toBe(
      [
        'letters.csv: 2 of 4 rows refused. Nothing was sent from this file.',
        'row 3: rule 5 (address fields), column "Land": ADDRESS_COUNTRY_CODE is 3 characters long; at most 2 allowed',
        'row 3: rule 6 (print address), payload.channelIdentifiers: print address is missing ADDRESS_POSTAL_CODE',
        'row 4: rule 4 (print address), column "ADDRESS": kind ADDRESS is not allowed on a print workflow (EASY_PRINT, EASY_PRINT_FR); use the structured ADDRESS_* kinds',
        'row 4: rule 6 (print address), payload.channelIdentifiers: print address is missing ADDRESS_POSTAL_CODE, ADDRESS_CITY, ADDRESS_COUNTRY_CODE',
        'row 4: rule 6 (print address), payload.channelIdentifiers: print address needs ADDRESS_STREET and ADDRESS_STREET_NUMBER, or ADDRESS_PO_BOX',
        '',
      ].join('\n'),
    );
  });

  it('labels format problems and PDFs of a batch, and says when the other rows went', () => {
    const report = formatRowReport(
      [{ row: 4, rule: 'format', field: 'file', message: '"zz.pdf" is not in the batch', file: 'zz.pdf' }],
      { fileName: 'index.csv', fileRejected: false },
    );
    expect(report).toBe(
      'index.csv: 1 row refused. The other rows were sent.\nrow 4 [zz.pdf]: format, file: "zz.pdf" is not in the batch\n',
    );
  });
});

describe('checkRows: execution dates', () => {
  const TAKEN = Date.parse('2026-11-20T10:00:00Z');

  it('refuses a row whose execution date is not later than the time the file was taken, naming the row and column', () => {
    const rows = built(
      'EMAIL_ADDRESS;executionDate\r\n' +
        'a@example.com;2026-11-21T09:00:00+01:00\r\n' +
        'b@example.com;2026-11-20T11:00:00+01:00\r\n',
    );
    const res = checkRows(rows, EMAIL_WORD, 'payload-word', 'skip', { notBefore: TAKEN });
    expect(res.accepted.map((a) => [a.row, a.request.sendingEventExecutionDateUtc])).toEqual([
      [2, '2026-11-21T08:00:00.000Z'],
    ]);
    expect(res.rejected).toEqual([
      expect.objectContaining({
        row: 3,
        column: 'executionDate',
        code: 'DOCEX_INPUT_EXECUTION_DATE',
        message:
          '2026-11-20T10:00:00.000Z is not later than 2026-11-20T10:00:00.000Z, when the file was taken: the row would be sent at once, not then',
      }),
    ]);
    expect(formatRowReport(res.rejected, { fileName: 'letters.csv' })).toContain(
      'row 3: DOCEX_INPUT_EXECUTION_DATE, column "executionDate": 2026-11-20T10:00:00.000Z is not later',
    );
  });

  it('refuses a JSON row whose sendingEventExecutionDateUtc has no offset, and sends a good one in UTC', () => {
    const request = (at: string) => ({
      row: 1,
      request: {
        workflowId: 'wf',
        jobName: 'j',
        filename: 'f.docx',
        sendingEventExecutionDateUtc: at,
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'a@example.com' }],
          extraInfoIdentifiers: [],
          templateData: {},
        },
      },
    });
    const bad = checkRows([request('2026-12-01T09:00:00')], EMAIL_WORD, 'payload-word', 'reject-file', {
      notBefore: TAKEN,
    });
    expect(bad.fileRejected).toBe(true);
    expect(bad.rejected[0]).toMatchObject({ row: 1, code: 'DOCEX_INPUT_EXECUTION_DATE' });
    const good = checkRows([request('2026-12-01T09:00:00-05:00')], EMAIL_WORD, 'payload-word');
    expect(good.accepted[0]?.request.sendingEventExecutionDateUtc).toBe('2026-12-01T14:00:00.000Z');
  });
});
