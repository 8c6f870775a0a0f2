/**
 * Checks that are what they say (issue 16, finding 6): the UBL namespace is the root element's,
 * JSON numbers are sent exactly or refused, and a hard link is refused unless the folder allows it.
 */
import { linkSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readUblSummary } from '../../../src/domain/ubl.js';
import { inspectFile } from '../../../src/pipeline/inspect/inspect-file.js';
import { payloadRequestsFromJson } from '../../../src/pipeline/payload/json-requests.js';
import { validPdf } from '../../fixtures/inputs/hostile.js';

const dir = mkdtempSync(path.join(tmpdir(), 'docex-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ubl = readFileSync('samples/ubl/invoice-base-example.xml', 'utf8');
const UBL_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';

describe('the UBL check reads the root element', () => {
  it('refuses a document whose root is not in the UBL namespace, though the URN appears elsewhere', () => {
    const inComment = ubl
      .replace(`xmlns="${UBL_NS}"`, 'xmlns="urn:example:not-ubl"')
      .replace('<Invoice', `<!-- ${UBL_NS} --><Invoice`);
    expect(inComment).not.toBe(ubl);
    expect(() => readUblSummary(inComment)).toThrow(/root <Invoice> is not in a UBL namespace/);
    const otherPrefix = `<x:Invoice xmlns:x="urn:example" xmlns="${UBL_NS}"><ID>1</ID></x:Invoice>`;
    expect(() => readUblSummary(otherPrefix)).toThrow(/not in a UBL namespace/);
  });

  it('takes the UBL namespace on a prefixed root', () => {
    const prefixed = ubl
      .replace(`xmlns="${UBL_NS}"`, `xmlns:ubl="${UBL_NS}"`)
      .replace('<Invoice', '<ubl:Invoice')
      .replace('</Invoice>', '</ubl:Invoice>');
    expect(readUblSummary(prefixed)).toMatchObject({ documentType: 'Invoice' });
  });
});

describe('JSON numbers', () => {
  const request = (number: string) =>
    Buffer.from(
      `{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@x.be"}],"extraInfoIdentifiers":[],"templateData":{"amount":${number}}}}`,
    );

  it.each(['12345678901234567890123', '1e400', '1e-400', '9007199254740993'])(
    'refuses %s, which a double cannot hold, instead of sending another number',
    (n) => {
      expect(payloadRequestsFromJson(request(n), { workflowId: 'wf', fileName: 'r.json' })).toMatchObject({
        ok: false,
        code: 'DOCEX_INPUT_JSON_NUMBER',
      });
    },
  );

  it.each(['0.1', '1.50', '-0', '1e22', '2.5E-3', '9007199254740992'])('sends %s as written', (n) => {
    const res = payloadRequestsFromJson(request(n), { workflowId: 'wf', fileName: 'r.json' });
    expect(res.ok && 'request' in res.rows[0]! && res.rows[0].request.payload.templateData?.['amount']).toBe(
      Number(n),
    );
  });
});

describe('hard links', () => {
  it('refuses a file with a second hard link, unless the folder allows them', async () => {
    const secret = path.join(dir, 'client.pdf');
    writeFileSync(secret, await validPdf());
    const dropped = path.join(dir, 'dropped.pdf');
    linkSync(secret, dropped);
    const opts = { path: dropped, fileName: 'dropped.pdf', inputSourceType: 'PDF', maxBytes: 1 << 30 };
    expect(await inspectFile(opts)).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_HARD_LINK',
      details: { links: 2 },
    });
    const held = readFileSync(dropped);
    expect(await inspectFile({ ...opts, bytes: held })).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_HARD_LINK',
    });
    expect(await inspectFile({ ...opts, allowHardLinks: true })).toMatchObject({ ok: true });
  });
});
