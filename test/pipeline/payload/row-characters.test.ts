/**
 * Issue 29: control characters, line breaks in one-line fields, invisible characters in
 * identifiers and repeated JSON keys refuse their row through the per-row path (the other rows
 * go), with row, field, column and code point named and the value never echoed.
 */
import { describe, expect, it } from 'vitest';
import {
  type BuildResult,
  type BuiltRow,
  checkRows,
  formatRowReport,
  payloadPdfBatchFromIndexCsv,
  payloadPdfFromSidecar,
  payloadRequestsFromCsv,
  payloadRequestsFromJson,
  payloadRequestsFromXml,
} from '../../../src/pipeline/payload/index.js';
import { planRows } from '../../../src/pipeline/rows-plan.js';
import { EMAIL_WORD, PRINT_PDF_POM } from './workflows.js';

function rowsOf(res: BuildResult): BuiltRow[] {
  if (!res.ok) throw new Error(`${res.code}: ${res.reason}`);
  return res.rows;
}

const problemsOf = (row: BuiltRow | undefined) => {
  if (!row || !('problems' in row)) throw new Error(`no problems: ${JSON.stringify(row)}`);
  return row.problems;
};

/** Plans a payload-word file the way payload-plan.ts does. */
function plan(res: BuildResult, onInvalidRow: 'skip' | 'reject-file', reportName = 'mailing.csv') {
  if (!res.ok) throw new Error(res.reason);
  const check = checkRows(res.rows, EMAIL_WORD, 'payload-word', onInvalidRow);
  return planRows(res, check, {
    reportName,
    fileReason: (bad) => `${bad} bad`,
    label: (row) => `${res.unit} ${row.row}`,
    target: (accepted) => accepted.request,
    reasonNamesColumns: true,
  });
}

const CSV =
  'Mail;data.name;extra.customerId\r\n' +
  'ok@example.com;Ok;C1\r\n' +
  'nul@example.com;secret\u0000name;C2\r\n' +
  'admin\u202e@example.com;Eve;C3\r\n' +
  'fine@example.com;"two\nlines";C4\r\n';
const csvRows = () =>
  payloadRequestsFromCsv(CSV, {
    workflowId: 'wf',
    fileName: 'mailing.csv',
    mapping: { Mail: 'EMAIL_ADDRESS' },
  });

describe('row values with hostile characters', () => {
  it('refuses a CSV row with a NUL in a cell, naming row, column, field and code point but not the value', () => {
    const rows = rowsOf(csvRows());
    expect(problemsOf(rows[1])).toEqual([
      {
        rule: 'format',
        field: 'payload.templateData.name',
        column: 'data.name',
        code: 'DOCEX_INPUT_CONTROL_CHARACTER',
        message: 'payload.templateData.name holds a control character, U+0000 (NUL), at character 7',
      },
    ]);
    expect(rows[1]?.row).toBe(3);
  });

  it('refuses a CSV row whose e-mail address holds a right-to-left override, naming the mapped ERP column', () => {
    const [p] = problemsOf(rowsOf(csvRows())[2]);
    expect(p).toMatchObject({
      column: 'Mail',
      field: 'payload.channelIdentifiers[0].value',
      code: 'DOCEX_INPUT_INVISIBLE_CHARACTER',
    });
    expect(p?.message).toContain('U+202E (right-to-left override)');
    expect(p?.message).not.toContain('admin');
  });

  it('sends the other rows under onInvalidRow: skip and journals each bad row with its own code', () => {
    const planned = plan(csvRows(), 'skip');
    if (!planned.ok) throw new Error(planned.reason);
    expect(planned.rows.map((r) => r.rejected?.code)).toEqual([
      undefined,
      'DOCEX_INPUT_CONTROL_CHARACTER',
      'DOCEX_INPUT_INVISIBLE_CHARACTER',
      undefined,
    ]);
    expect([...planned.byRow.keys()]).toEqual([0, 3]);
    expect(planned.rows[1]?.rejected?.reason).toBe(
      'DOCEX_INPUT_CONTROL_CHARACTER (column data.name): payload.templateData.name holds a control character, U+0000 (NUL), at character 7',
    );
    expect(planned.report).toContain(
      'row 4: DOCEX_INPUT_INVISIBLE_CHARACTER, column "Mail": payload.channelIdentifiers[0].value (EMAIL_ADDRESS) holds an invisible character, U+202E (right-to-left override), at character 6',
    );
    expect(planned.report).not.toContain('secret');
  });

  it('refuses the whole file under reject-file with the shared code, or the generic one for a mix', () => {
    const only = plan(
      payloadRequestsFromCsv('EMAIL_ADDRESS;data.a\na@example.com;x\u0007\nb@example.com;y\u009b\n', {
        workflowId: 'wf',
        fileName: 'bell.csv',
      }),
      'reject-file',
    );
    expect(only).toMatchObject({ ok: false, code: 'DOCEX_INPUT_CONTROL_CHARACTER' });
    expect(plan(csvRows(), 'reject-file')).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ROWS_INVALID' });
  });

  it('refuses JSON items with a lone surrogate escape, a C1 control or a repeated key, and keeps the good item', () => {
    const text =
      '[{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],"extraInfoIdentifiers":[],"templateData":{"n":"ok"}}},' +
      '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"b@example.com"}],"extraInfoIdentifiers":[],"templateData":{"n":"\\ud800"}}},' +
      '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"c@example.com"}],"extraInfoIdentifiers":[],"templateData":{"n":"a\\u0085b"}}},' +
      '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"shown@example.com","\\u0076alue":"sent@evil.example"}],"extraInfoIdentifiers":[],"templateData":{}}}]';
    const rows = rowsOf(payloadRequestsFromJson(text, { workflowId: 'wf', fileName: 'mailing.json' }));
    expect('request' in rows[0]!).toBe(true);
    expect(problemsOf(rows[1])).toMatchObject([
      { field: 'payload.templateData.n', code: 'DOCEX_INPUT_CONTROL_CHARACTER' },
    ]);
    expect(problemsOf(rows[1])[0]?.message).toContain('lone surrogate');
    expect(problemsOf(rows[2])[0]?.message).toContain('U+0085 (next line)');
    expect(problemsOf(rows[3])).toEqual([
      {
        rule: 'format',
        field: 'payload.channelIdentifiers[0].value',
        code: 'DOCEX_INPUT_JSON_DUPLICATE_KEY',
        message:
          'the key "value" appears more than once in payload.channelIdentifiers[0]; a JSON reader keeps only one of its values',
      },
    ]);
    const planned = plan(
      payloadRequestsFromJson(text, { workflowId: 'wf', fileName: 'mailing.json' }),
      'skip',
    );
    if (!planned.ok) throw new Error(planned.reason);
    expect(planned.rows.map((r) => r.rejected?.code)).toEqual([
      undefined,
      'DOCEX_INPUT_CONTROL_CHARACTER',
      'DOCEX_INPUT_CONTROL_CHARACTER',
      'DOCEX_INPUT_JSON_DUPLICATE_KEY',
    ]);
    expect(planned.report).not.toContain('evil');
  });

  it('refuses a single JSON request that names jobName twice under the file-level code', () => {
    const text =
      '{"jobName":"first","jobName":"second","payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],"extraInfoIdentifiers":[],"templateData":{}}}';
    const planned = plan(
      payloadRequestsFromJson(text, { workflowId: 'wf', fileName: 'one.json' }),
      'reject-file',
      'one.json',
    );
    expect(planned).toMatchObject({ ok: false, code: 'DOCEX_INPUT_JSON_DUPLICATE_KEY' });
    expect(planned.ok === false && planned.report).toContain('one.json: 1 of 1 item refused');
  });

  it('refuses a sidecar with a bidi isolate in a Peppol participant id, or a bare payload naming a key twice', () => {
    const bidi = payloadPdfFromSidecar(
      'letter.pdf',
      JSON.stringify({
        channelIdentifiers: [
          { kind: 'PEPPOL_RECEIVER_PARTICIPANT_ID', value: '0208:\u20660123456789\u2069' },
        ],
        extraInfoIdentifiers: [],
      }),
      { workflowId: 'wf' },
    );
    expect(problemsOf(rowsOf(bidi)[0])).toMatchObject([
      { field: 'payload.channelIdentifiers[0].value', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' },
    ]);
    const twice = payloadPdfFromSidecar(
      'letter.pdf',
      '{"channelIdentifiers":[{"kind":"ADDRESS_CITY","value":"Paris"}],"extraInfoIdentifiers":[],"channelIdentifiers":[]}',
      { workflowId: 'wf' },
    );
    expect(problemsOf(rowsOf(twice)[0])).toMatchObject([
      { field: 'payload.channelIdentifiers', code: 'DOCEX_INPUT_JSON_DUPLICATE_KEY' },
    ]);
    const check = checkRows(rowsOf(twice), PRINT_PDF_POM, 'payload-pdf');
    expect(formatRowReport(check.rejected, { fileName: 'letter.json', unit: 'item' })).toContain(
      'item 1 [letter.pdf]: DOCEX_INPUT_JSON_DUPLICATE_KEY, payload.channelIdentifiers: the key "channelIdentifiers" appears more than once in payload',
    );
  });

  it('refuses an index.csv row whose phone number holds a zero width joiner, tied to its PDF', () => {
    const rows = rowsOf(
      payloadPdfBatchFromIndexCsv('file;PHONE_NUMBER\na.pdf;+32 470 12 34 56\nb.pdf;+32\u200d470123456\n', {
        workflowId: 'wf',
        pdfFiles: ['a.pdf', 'b.pdf'],
      }),
    );
    expect('request' in rows[0]!).toBe(true);
    expect(rows[1]).toMatchObject({
      row: 3,
      file: 'b.pdf',
      problems: [{ column: 'PHONE_NUMBER', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' }],
    });
  });

  it('keeps a column name or a PDF name with line breaks and bidi controls from writing report lines of their own', () => {
    const csv = rowsOf(
      payloadRequestsFromCsv('EMAIL_ADDRESS;"data.a\nrow 9: forged\u202e"\na@example.com;x\n', {
        workflowId: 'wf',
        fileName: 'forged.csv',
      }),
    );
    const index = rowsOf(
      payloadPdfBatchFromIndexCsv(
        'file;EMAIL_ADDRESS\na.pdf;a@example.com\n"b.pdf\nrow 7: fake";b@example.com\n',
        {
          workflowId: 'wf',
          pdfFiles: ['a.pdf'],
        },
      ),
    );
    const report = formatRowReport(checkRows([...csv, ...index], EMAIL_WORD, 'payload-word').rejected);
    expect(report.split('\n').filter((l) => l !== '')).toEqual([
      'file: 2 rows refused.',
      'row 2: DOCEX_INPUT_CONTROL_CHARACTER, column "data.a row 9: forged\\u202e": the key payload.templateData["a\\nrow 9: forged\\u202e"] holds a line break, U+000A (line feed), at character 2; this field takes one line',
      'row 3 [b.pdf row 7: fake]: format, file: "b.pdf\\nrow 7: fake" is not in the batch',
    ]);
  });

  it('refuses an XML record whose field text holds a raw control character, naming the element path', () => {
    const xml =
      '<?xml version="1.0"?><customers><customer id="1"><email>a@example.com</email><name>Ann</name></customer>' +
      '<customer id="2"><email>b@example.com</email><name>B\u0001b</name></customer></customers>';
    const rows = rowsOf(
      payloadRequestsFromXml(
        xml,
        {
          record: 'customers/customer',
          fields: { '@id': 'extra.customerId', email: 'EMAIL_ADDRESS', name: 'data.name' },
        },
        { workflowId: 'wf', fileName: 'customers.xml' },
      ),
    );
    expect('request' in rows[0]!).toBe(true);
    expect(problemsOf(rows[1])).toMatchObject([
      { column: 'name', field: 'payload.templateData.name', code: 'DOCEX_INPUT_CONTROL_CHARACTER' },
    ]);
  });

  it('never takes one of two values silently from XML: a repeated attribute refuses the file, a repeated element its record', () => {
    const mapping = {
      record: 'customers/customer',
      fields: { '@id': 'extra.customerId', email: 'EMAIL_ADDRESS' },
    };
    const attr = payloadRequestsFromXml(
      '<customers><customer id="1" id="2"><email>a@example.com</email></customer></customers>',
      mapping,
      { workflowId: 'wf', fileName: 'attr.xml' },
    );
    expect(attr).toMatchObject({ ok: false, code: 'DOCEX_INPUT_XML_MALFORMED' });
    const element = rowsOf(
      payloadRequestsFromXml(
        '<customers><customer id="1"><email>shown@example.com</email><email>sent@evil.example</email></customer></customers>',
        mapping,
        { workflowId: 'wf', fileName: 'element.xml' },
      ),
    );
    expect(problemsOf(element[0])).toMatchObject([
      { field: 'email', message: 'appears 2 times in the record' },
    ]);
  });
});
