import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  payloadPdfFromSidecar,
  payloadRequestsFromJson,
} from '../../../src/pipeline/payload/json-requests.js';
import type { BuildResult, BuiltRow } from '../../../src/pipeline/payload/types.js';
import {
  payloadRequestsFromXml,
  type XmlPayloadMapping,
} from '../../../src/pipeline/payload/xml-requests.js';
import { BILLION_LAUGHS } from '../../fixtures/inputs/hostile.js';

const sample = (rel: string) => readFileSync(new URL(`../../../samples/${rel}`, import.meta.url));

/** The channel identifiers of a row that built a request. */
function identifiersOf(row: BuiltRow | undefined) {
  if (!row || !('request' in row)) throw new Error(`no request: ${JSON.stringify(row)}`);
  return row.request.payload.channelIdentifiers;
}

function rowsOf(res: BuildResult): BuiltRow[] {
  if (!res.ok) throw new Error(`${res.code}: ${res.reason}`);
  return res.rows;
}

describe('payloadRequestsFromJson', () => {
  it('reads one request as is', () => {
    const rows = rowsOf(
      payloadRequestsFromJson(sample('payload-word/email.json'), {
        workflowId: 'wf_payload_word_email',
        fileName: 'email.json',
      }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      row: 1,
      request: JSON.parse(sample('payload-word/email.json').toString()),
    });
  });

  it('reads an array, item n as row n, filling workflowId, jobName and filename', () => {
    const json = JSON.stringify([
      {
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'a@x.be' }],
          extraInfoIdentifiers: [],
          templateData: {},
        },
      },
      { jobName: 'Mine', payload: { channelIdentifiers: [], extraInfoIdentifiers: [], templateData: {} } },
    ]);
    expect(
      rowsOf(
        payloadRequestsFromJson(json, { workflowId: 'wf_w', fileName: 'batch.json', jobNamePrefix: 'p/' }),
      ),
    ).toMatchObject([
      { row: 1, request: { workflowId: 'wf_w', jobName: 'p/batch.json item 1', filename: 'batch-1.docx' } },
      { row: 2, request: { workflowId: 'wf_w', jobName: 'Mine', filename: 'batch-2.docx' } },
    ]);
  });

  it('reports an item for another workflow and items of the wrong shape', () => {
    const json = JSON.stringify([
      { workflowId: 'wf_other', payload: { channelIdentifiers: [], extraInfoIdentifiers: [] } },
      { payload: { channelIdentifiers: [{ kind: 'EMAIL_ADDRESS' }], extraInfoIdentifiers: [] } },
      'nope',
    ]);
    const rows = rowsOf(payloadRequestsFromJson(json, { workflowId: 'wf_w', fileName: 'b.json' }));
    expect(rows).toMatchObject([
      {
        row: 1,
        problems: [
          {
            rule: 'format',
            field: 'workflowId',
            message: 'names workflow wf_other, but the folder is mapped to wf_w',
          },
        ],
      },
      { row: 2, problems: [{ rule: 'format', field: 'payload.channelIdentifiers.0.value' }] },
      { row: 3, problems: [{ rule: 'format', message: 'is not a JSON object' }] },
    ]);
  });

  it('refuses broken JSON and an empty array for the whole file', () => {
    expect(payloadRequestsFromJson('{', { workflowId: 'w', fileName: 'x.json' })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_JSON_MALFORMED',
    });
    expect(payloadRequestsFromJson('[]', { workflowId: 'w', fileName: 'x.json' })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_NO_RECORDS',
    });
  });
});

describe('payloadPdfFromSidecar', () => {
  it('reads the sample sidecar, a whole request, tied to its PDF', () => {
    const rows = rowsOf(
      payloadPdfFromSidecar('letter-with-payment.pdf', sample('payload-pdf-print/letter-with-payment.json'), {
        workflowId: 'wf_payload_pdf_print',
      }),
    );
    expect(rows).toMatchObject([
      {
        row: 1,
        file: 'letter-with-payment.pdf',
        request: { filename: 'letter-with-payment.pdf', jobName: 'Payment request 2026-0007' },
      },
    ]);
  });

  it('reads a bare payload, naming the job after the PDF', () => {
    const sidecar = JSON.stringify({
      channelIdentifiers: [{ kind: 'ADDRESS_CITY', value: 'Gent' }],
      extraInfoIdentifiers: [],
    });
    expect(
      rowsOf(payloadPdfFromSidecar('scan 1.pdf', sidecar, { workflowId: 'wf_p', jobNamePrefix: 'in/' })),
    ).toMatchObject([
      {
        file: 'scan 1.pdf',
        request: {
          workflowId: 'wf_p',
          jobName: 'in/scan 1.pdf',
          filename: 'scan 1.pdf',
          payload: { channelIdentifiers: [{ kind: 'ADDRESS_CITY' }] },
        },
      },
    ]);
  });

  it('names the sidecar when it is not JSON', () => {
    expect(payloadPdfFromSidecar('a.pdf', 'oops', { workflowId: 'w' })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_JSON_MALFORMED',
      reason: expect.stringMatching(/^"a\.json" is not valid JSON/),
    });
  });
});

describe('payloadRequestsFromXml', () => {
  const mapping: XmlPayloadMapping = {
    record: 'customers/customer',
    fields: {
      '@id': 'extra.customerId',
      name: 'data.name',
      email: 'EMAIL_ADDRESS',
      amount: 'data.invoice.amount',
    },
  };

  it('maps each record of the sample data XML to a request', () => {
    const rows = rowsOf(
      payloadRequestsFromXml(sample('data-file/customers.xml'), mapping, {
        workflowId: 'wf_w',
        fileName: 'customers.xml',
      }),
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({
      row: 1,
      request: {
        workflowId: 'wf_w',
        jobName: 'customers.xml record 1',
        filename: 'customers-record-1.docx',
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'jane.doe@example.com' }],
          extraInfoIdentifiers: [{ name: 'customerId', value: 'C001' }],
          templateData: { name: 'Jane Doe', invoice: { amount: '125.00' } },
        },
      },
      columns: { channel: ['email'], extra: ['@id'] },
    });
  });

  it('reads nested fields, a single record, and namespaced elements', () => {
    const xml =
      '<e:export xmlns:e="urn:erp"><e:client><e:contact><e:mail>a@x.be</e:mail></e:contact></e:client></e:export>';
    const rows = rowsOf(
      payloadRequestsFromXml(
        xml,
        { record: 'export/client', fields: { 'contact/mail': 'EMAIL_ADDRESS' } },
        { workflowId: 'w', fileName: 'e.xml' },
      ),
    );
    expect(rows).toMatchObject([
      { row: 1, request: { payload: { channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'a@x.be' }] } } },
    ]);
  });

  it('maps fields to DOCCLE_* and DOCPORTAL_* kinds, keeping the spelling of the mapping', () => {
    const xml = '<c><r><t1>a</t1><t2>b</t2><end>2026-12-31</end></r></c>';
    const rows = rowsOf(
      payloadRequestsFromXml(
        xml,
        {
          record: 'c/r',
          fields: {
            t1: 'DOCCLE_TOKEN_SET_VALUE1',
            t2: 'DOCPORTAL_TOKEN_SET_VALUE2',
            end: 'DOCCLE_TOKEN_SET_END_DATE',
          },
        },
        { workflowId: 'w', fileName: 'c.xml' },
      ),
    );
    expect(identifiersOf(rows[0])).toEqual([
      { kind: 'DOCCLE_TOKEN_SET_VALUE1', value: 'a' },
      { kind: 'DOCPORTAL_TOKEN_SET_VALUE2', value: 'b' },
      { kind: 'DOCCLE_TOKEN_SET_END_DATE', value: '2026-12-31' },
    ]);
  });

  it('reads a JSON request with DOCCLE_* kinds as written', () => {
    const json = JSON.stringify({
      payload: {
        channelIdentifiers: [{ kind: 'DOCCLE_TOKEN_SET_VALUE1', value: 'a', mustBeEncrypted: true }],
        extraInfoIdentifiers: [],
        templateData: {},
      },
    });
    const rows = rowsOf(payloadRequestsFromJson(json, { workflowId: 'w', fileName: 'd.json' }));
    expect(identifiersOf(rows[0])).toEqual([
      { kind: 'DOCCLE_TOKEN_SET_VALUE1', value: 'a', mustBeEncrypted: true },
    ]);
  });

  it('reports a field repeated inside a record', () => {
    const xml = '<customers><customer><email>a@x.be</email><email>b@x.be</email></customer></customers>';
    expect(rowsOf(payloadRequestsFromXml(xml, mapping, { workflowId: 'w', fileName: 'c.xml' }))).toEqual([
      { row: 1, problems: [{ rule: 'format', field: 'email', message: 'appears 2 times in the record' }] },
    ]);
  });

  it('refuses a file the mapping does not fit, an entity bomb, and a mapping to unknown columns', () => {
    expect(
      payloadRequestsFromXml('<orders><o/></orders>', mapping, { workflowId: 'w', fileName: 'o.xml' }),
    ).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_PAYLOAD_MAPPING',
      reason: '"o.xml" has root <orders>, but the folder\'s mapping expects records at "customers/customer".',
    });
    expect(
      payloadRequestsFromXml(BILLION_LAUGHS, mapping, { workflowId: 'w', fileName: 'l.xml' }),
    ).toMatchObject({ code: 'DOCEX_INPUT_XML_DTD' });
    expect(
      payloadRequestsFromXml(
        '<customers><customer/></customers>',
        { record: 'customers/customer', fields: { x: 'MAIL' } },
        { workflowId: 'w', fileName: 'c.xml' },
      ),
    ).toMatchObject({ code: 'DOCEX_INPUT_PAYLOAD_COLUMNS' });
  });
});
