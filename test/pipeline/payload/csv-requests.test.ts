import { describe, expect, it } from 'vitest';
import {
  payloadPdfBatchFromIndexCsv,
  payloadRequestsFromCsv,
} from '../../../src/pipeline/payload/csv-requests.js';
import type { BuildResult, BuiltRow } from '../../../src/pipeline/payload/types.js';

const opts = { workflowId: 'wf_word_email', fileName: 'mailing.csv' };

/** The channel identifiers of a row that built a request. */
function identifiersOf(row: BuiltRow | undefined) {
  if (!row || !('request' in row)) throw new Error(`no request: ${JSON.stringify(row)}`);
  return row.request.payload.channelIdentifiers;
}

function rowsOf(res: BuildResult): BuiltRow[] {
  if (!res.ok) throw new Error(`${res.code}: ${res.reason}`);
  return res.rows;
}

describe('payloadRequestsFromCsv', () => {
  it('turns a ";" CSV with a BOM and CRLF into one payload request per row', () => {
    const csv =
      '\uFEFFEMAIL_ADDRESS;extra.customerId;data.customer.name;data.invoice.amount;ADDRESS_BOX\r\n' +
      'jane@example.com;C001;Jane Doe;125,00;\r\n' +
      'john@example.com;C002;John Smith;80,50;\r\n';
    const rows = rowsOf(payloadRequestsFromCsv(Buffer.from(csv), opts));
    expect(rows).toEqual([
      {
        row: 2,
        request: {
          workflowId: 'wf_word_email',
          jobName: 'mailing.csv row 2',
          filename: 'mailing-row-2.docx',
          payload: {
            channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'jane@example.com' }],
            extraInfoIdentifiers: [{ name: 'customerId', value: 'C001' }],
            templateData: { customer: { name: 'Jane Doe' }, invoice: { amount: '125,00' } },
          },
        },
        columns: { channel: ['EMAIL_ADDRESS'], extra: ['extra.customerId'] },
      },
      expect.objectContaining({ row: 3 }),
    ]);
  });

  it('maps DOCCLE_* and DOCPORTAL_* columns as written, encryption flags crossing the two spellings', () => {
    const csv =
      'doccle_token_set_value1;DOCPORTAL_TOKEN_SET_VALUE2;DOCCLE_RECEIVER_ID;encrypt.DOCPORTAL_TOKEN_SET_VALUE1;encrypt.doccle_token_set_value2\n' +
      't1;t2;r1;yes;yes\n';
    const rows = rowsOf(payloadRequestsFromCsv(csv, opts));
    expect(rows[0]).toMatchObject({
      request: {
        payload: {
          channelIdentifiers: [
            { kind: 'DOCCLE_TOKEN_SET_VALUE1', value: 't1', mustBeEncrypted: true },
            { kind: 'DOCPORTAL_TOKEN_SET_VALUE2', value: 't2', mustBeEncrypted: true },
            { kind: 'DOCCLE_RECEIVER_ID', value: 'r1' },
          ],
        },
      },
      columns: {
        channel: ['doccle_token_set_value1', 'DOCPORTAL_TOKEN_SET_VALUE2', 'DOCCLE_RECEIVER_ID'],
      },
    });
    expect(identifiersOf(rows[0])[2]).not.toHaveProperty('mustBeEncrypted');
  });

  it('renames ERP columns with the mapping, ignores null-mapped ones, and sets encryption flags', () => {
    const csv =
      'Mail,Rijksregister,Klant,Geheim,Intern\n' +
      'jane@example.com,85073100145,C001,yes,x-1\n' +
      'john@example.com,,C002,no,x-2\n';
    const rows = rowsOf(
      payloadRequestsFromCsv(csv, {
        ...opts,
        jobNamePrefix: 'billing/',
        mapping: {
          Mail: 'EMAIL_ADDRESS',
          Rijksregister: 'NATIONAL_REGISTER_NUMBER',
          Klant: 'extra.customer',
          Geheim: 'encrypt.EMAIL_ADDRESS',
          Intern: null,
        },
      }),
    );
    expect(rows[0]).toMatchObject({
      row: 2,
      request: {
        jobName: 'billing/mailing.csv row 2',
        payload: {
          channelIdentifiers: [
            { kind: 'EMAIL_ADDRESS', value: 'jane@example.com', mustBeEncrypted: true },
            { kind: 'NATIONAL_REGISTER_NUMBER', value: '85073100145' },
          ],
          extraInfoIdentifiers: [{ name: 'customer', value: 'C001' }],
        },
      },
      columns: { channel: ['Mail', 'Rijksregister'], extra: ['Klant'] },
    });
    // An empty cell adds nothing; "no" leaves the flag off.
    expect(rows[1]).toMatchObject({
      request: { payload: { channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'john@example.com' }] } },
    });
    expect(JSON.stringify(rows[1])).not.toContain('mustBeEncrypted');
  });

  it('takes jobName, filename and sendingEventExecutionDateUtc columns over the defaults', () => {
    const csv =
      'EMAIL_ADDRESS;jobName;filename;sendingEventExecutionDateUtc\na@example.com;Run 7;r7.docx;2026-12-01T08:00:00.000Z\n';
    expect(rowsOf(payloadRequestsFromCsv(csv, opts))[0]).toMatchObject({
      request: {
        jobName: 'Run 7',
        filename: 'r7.docx',
        sendingEventExecutionDateUtc: '2026-12-01T08:00:00.000Z',
      },
    });
  });

  it('reads an executionDate column with its offset into sendingEventExecutionDateUtc in UTC', () => {
    const csv = 'EMAIL_ADDRESS;executionDate\na@example.com;2026-12-01T09:00:00+01:00\n';
    expect(rowsOf(payloadRequestsFromCsv(csv, opts))[0]).toMatchObject({
      request: { sendingEventExecutionDateUtc: '2026-12-01T08:00:00.000Z' },
      columns: { fields: { sendingEventExecutionDateUtc: 'executionDate' } },
    });
  });

  it('refuses an executionDate without its offset, naming the row and the column', () => {
    const csv = 'EMAIL_ADDRESS;executionDate\na@example.com;2026-12-01 09:00\n';
    expect(rowsOf(payloadRequestsFromCsv(csv, opts))).toEqual([
      {
        row: 2,
        problems: [
          expect.objectContaining({
            column: 'executionDate',
            code: 'DOCEX_INPUT_EXECUTION_DATE',
            message: expect.stringContaining('"2026-12-01 09:00" is not a date-time with its offset'),
          }),
        ],
      },
    ]);
  });

  it('refuses a file with both executionDate and sendingEventExecutionDateUtc columns', () => {
    const res = payloadRequestsFromCsv(
      'EMAIL_ADDRESS;executionDate;sendingEventExecutionDateUtc\na@x.be;2026-12-01T08:00Z;2026-12-01T08:00Z\n',
      opts,
    );
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PAYLOAD_COLUMNS' });
  });

  it('reports bad cells as format problems of their row and column', () => {
    const csv =
      'EMAIL_ADDRESS;encrypt.EMAIL_ADDRESS;sendingEventExecutionDateUtc\na@x.be;maybe;\nb@x.be;yes;tomorrow\n';
    expect(rowsOf(payloadRequestsFromCsv(csv, opts))).toEqual([
      {
        row: 2,
        problems: [
          {
            rule: 'format',
            field: 'encrypt.EMAIL_ADDRESS',
            column: 'encrypt.EMAIL_ADDRESS',
            message: '"maybe" is not a yes/no value',
          },
        ],
      },
      {
        row: 3,
        problems: [
          {
            rule: 'format',
            field: 'sendingEventExecutionDateUtc',
            column: 'sendingEventExecutionDateUtc',
            message:
              '"tomorrow" is not a date-time with its offset (ISO 8601, such as 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z)',
            code: 'DOCEX_INPUT_EXECUTION_DATE',
          },
        ],
      },
    ]);
  });

  it('refuses a file with an unknown column, naming it and the way out', () => {
    const res = payloadRequestsFromCsv('EMAIL_ADRESS;extra.id\na@x.be;1\n', opts);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_PAYLOAD_COLUMNS',
      details: { columns: ['EMAIL_ADRESS'] },
    });
    expect(!res.ok && res.reason).toBe(
      '"mailing.csv" has columns that are not a channel identifier kind, extra.<name>, data.<path>, encrypt.<KIND> or a ' +
        'request field: "EMAIL_ADRESS"; rename them in the folder\'s mapping (or map them to null to ignore them).',
    );
  });

  it.each([
    [
      'an encryption flag without its kind',
      'EMAIL_ADDRESS;encrypt.FIRST_NAME\n',
      '"encrypt.FIRST_NAME" has no FIRST_NAME column to apply to',
    ],
    [
      'a data path that is a value and an object',
      'data.a;data.a.b\n',
      'data.a is both a value and an object',
    ],
    ['an extra name given twice', 'extra.id;extra.id\n', 'column "extra.id" appears twice'],
  ])('refuses %s', (_what, header, problem) => {
    const res = payloadRequestsFromCsv(`${header}1;2\n`, opts);
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_PAYLOAD_COLUMNS',
      reason: `"mailing.csv": ${problem}.`,
    });
  });

  it('accepts a kind given twice (two e-mail addresses)', () => {
    const rows = rowsOf(
      payloadRequestsFromCsv('A;B\na@x.be;b@x.be\n', {
        ...opts,
        mapping: { A: 'EMAIL_ADDRESS', B: 'EMAIL_ADDRESS' },
      }),
    );
    expect(rows[0]).toMatchObject({
      request: { payload: { channelIdentifiers: [{ value: 'a@x.be' }, { value: 'b@x.be' }] } },
    });
  });

  it('passes on the CSV checks: ragged rows, encoding, no rows', () => {
    expect(payloadRequestsFromCsv('EMAIL_ADDRESS;extra.a\na@x.be\n', opts)).toMatchObject({
      code: 'DOCEX_INPUT_CSV_RAGGED',
    });
    expect(payloadRequestsFromCsv(Buffer.from([0x45, 0x0a, 0xff, 0x0a]), opts)).toMatchObject({
      code: 'DOCEX_INPUT_ENCODING',
    });
    expect(payloadRequestsFromCsv('EMAIL_ADDRESS\r\n', opts)).toMatchObject({
      code: 'DOCEX_INPUT_NO_RECORDS',
    });
  });
});

describe('payloadPdfBatchFromIndexCsv', () => {
  const index =
    'file;ADDRESS_COMPANY_NAME;INVOICE_AMOUNT\r\na.pdf;Acme NV;10.00\r\nsub/b.pdf;Beta BV;20.00\r\n';

  it('builds one request per PDF, named after it', () => {
    const rows = rowsOf(
      payloadPdfBatchFromIndexCsv(index, { workflowId: 'wf_pdf', pdfFiles: ['a.pdf', 'sub/b.pdf'] }),
    );
    expect(rows).toMatchObject([
      {
        row: 2,
        file: 'a.pdf',
        request: {
          filename: 'a.pdf',
          jobName: 'a.pdf',
          payload: { channelIdentifiers: [{ kind: 'ADDRESS_COMPANY_NAME' }, { kind: 'INVOICE_AMOUNT' }] },
        },
      },
      { row: 3, file: 'sub/b.pdf', request: { filename: 'b.pdf', jobName: 'sub/b.pdf' } },
    ]);
  });

  it('refuses a batch with a PDF that has no row', () => {
    const res = payloadPdfBatchFromIndexCsv(index, {
      workflowId: 'wf_pdf',
      pdfFiles: ['a.pdf', 'sub/b.pdf', 'c.pdf'],
    });
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_BATCH_INDEX',
      reason: '"index.csv" has no row for "c.pdf"; every PDF of the batch needs one.',
    });
  });

  it('refuses an index without a file column', () => {
    expect(payloadPdfBatchFromIndexCsv('ADDRESS_CITY\nParis\n', { workflowId: 'wf_pdf' })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_BATCH_INDEX',
      reason: '"index.csv" has no "file" column naming each row\'s PDF.',
    });
  });

  it('reports rows naming a missing PDF, a PDF twice, or none', () => {
    const csv = 'file;ADDRESS_CITY\na.pdf;Gent\nzz.pdf;Gent\na.pdf;Gent\n;Gent\n';
    const rows = rowsOf(payloadPdfBatchFromIndexCsv(csv, { workflowId: 'wf_pdf', pdfFiles: ['a.pdf'] }));
    expect(rows.map((r) => ('problems' in r ? [r.row, r.problems[0]?.message] : [r.row, 'ok']))).toEqual([
      [2, 'ok'],
      [3, '"zz.pdf" is not in the batch'],
      [4, '"a.pdf" is already named on row 2'],
      [5, 'the file cell is empty'],
    ]);
  });
});
