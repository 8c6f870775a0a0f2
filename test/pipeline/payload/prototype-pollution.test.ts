/**
 * Every entry point where a dropped file's names become object keys (issue 16, finding 2): a CSV
 * header, a payload-pdf index.csv, a JSON request or sidecar, an XML file read through a mapping.
 * Each must refuse __proto__, constructor and prototype, and nothing may reach Object.prototype.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inspectJsonBytes } from '../../../src/pipeline/inspect/json.js';
import {
  payloadPdfBatchFromIndexCsv,
  payloadRequestsFromCsv,
} from '../../../src/pipeline/payload/csv-requests.js';
import {
  payloadPdfFromSidecar,
  payloadRequestsFromJson,
} from '../../../src/pipeline/payload/json-requests.js';
import { payloadRequestsFromXml } from '../../../src/pipeline/payload/xml-requests.js';

const probe = (): unknown => ({}) as Record<string, unknown>;
const polluted = () => ['managedCompanyId', 'x', 'polluted'].filter((k) => k in (probe() as object));

afterEach(() => {
  // A failing run must not leave the rest of the file polluted.
  for (const k of ['managedCompanyId', 'x', 'polluted'])
    delete (Object.prototype as Record<string, unknown>)[k];
});

const payload = (templateData: string) =>
  `{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@x.be"}],"extraInfoIdentifiers":[],"templateData":${templateData}}}`;

describe('untrusted names never become prototype keys', () => {
  it('refuses a payload CSV column data.__proto__.<name> and leaves Object.prototype alone', () => {
    const csv = 'EMAIL_ADDRESS,data.__proto__.managedCompanyId\nx@example.com,cmp_managed\n';
    const res = payloadRequestsFromCsv(csv, { workflowId: 'wf', fileName: 'rows.csv' });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
    expect(polluted()).toEqual([]);
  });

  it('refuses data.constructor.prototype.<name> and data.a.prototype columns', () => {
    for (const column of ['data.constructor.prototype.x', 'data.a.prototype']) {
      const res = payloadRequestsFromCsv(`EMAIL_ADDRESS,${column}\nx@example.com,1\n`, {
        workflowId: 'wf',
        fileName: 'rows.csv',
      });
      expect(res, column).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
    }
    expect(polluted()).toEqual([]);
  });

  it('reads a header named like an Object.prototype member as an unknown column, with a mapping', () => {
    // `source in mapping` found Object.prototype.constructor and threw a TypeError.
    const res = payloadRequestsFromCsv('EMAIL_ADDRESS,constructor\nx@example.com,1\n', {
      workflowId: 'wf',
      fileName: 'rows.csv',
      mapping: { Mail: 'EMAIL_ADDRESS' },
    });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PAYLOAD_COLUMNS' });
  });

  it('refuses an index.csv of a payload-pdf batch with a data.__proto__ column', () => {
    const index = 'file;ADDRESS_CITY;data.__proto__.managedCompanyId\na.pdf;Gent;cmp_managed\n';
    const res = payloadPdfBatchFromIndexCsv(index, { workflowId: 'wf', pdfFiles: ['a.pdf'] });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
    expect(polluted()).toEqual([]);
  });

  it('refuses a JSON request with a __proto__ key at any depth, instead of silently dropping it', () => {
    for (const data of ['{"__proto__":{"polluted":1}}', '{"a":{"b":[{"constructor":{"x":1}}]}}']) {
      const res = payloadRequestsFromJson(Buffer.from(payload(data)), {
        workflowId: 'wf',
        fileName: 'r.json',
      });
      expect(res, data).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
    }
    expect(inspectJsonBytes(Buffer.from(payload('{"prototype":1}')), 'r.json')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_UNSAFE_KEY',
    });
    expect(polluted()).toEqual([]);
  });

  it('refuses a payload-pdf sidecar with a __proto__ key', () => {
    const res = payloadPdfFromSidecar('letter.pdf', Buffer.from(payload('{"__proto__":{"polluted":1}}')), {
      workflowId: 'wf',
    });
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
  });

  it('refuses an XML payload file with a __proto__ or constructor element', () => {
    for (const element of ['__proto__', 'constructor']) {
      const xml = `<r><c><email>a@x.be</email><${element}><polluted>1</polluted></${element}></c></r>`;
      const res = payloadRequestsFromXml(
        Buffer.from(xml),
        { record: 'r/c', fields: { email: 'EMAIL_ADDRESS', [`${element}/polluted`]: 'data.x' } },
        { workflowId: 'wf', fileName: 'r.xml' },
      );
      expect(res, element).toMatchObject({ ok: false, code: 'DOCEX_INPUT_UNSAFE_KEY' });
    }
    expect(polluted()).toEqual([]);
  });
});
