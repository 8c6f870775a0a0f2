import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import { readUblSummary } from '../../src/domain/ubl.js';

// The Peppol BIS examples of shared/data, as the sandbox ships them (identical copies).
const dir = new URL('../../src/sandbox/seed-data/peppol/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.xml'));
const read = (name: string) => readFileSync(new URL(name, dir), 'utf8');

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isDocexError(err) ? err.code : 'not-a-docex-error';
  }
  return undefined;
}

describe('readUblSummary', () => {
  it('finds all eleven Peppol example documents', () => {
    expect(files).toHaveLength(11);
  });

  it('reads the Peppol base invoice example', () => {
    expect(readUblSummary(read('base-example.xml'))).toEqual({
      documentType: 'Invoice',
      documentNumber: 'Snippet1',
      issueDate: '2017-11-13',
      senderId: '0088:9482348239847239874',
      receiverId: '0002:FR23342',
      senderName: 'SupplierTradingName Ltd.',
      receiverName: 'BuyerTradingName AS',
      amount: '1656.25',
      currency: 'EUR',
    });
  });

  it('reads the credit note as documentType CreditNote', () => {
    expect(readUblSummary(read('base-creditnote-correction.xml'))).toEqual({
      documentType: 'CreditNote',
      documentNumber: 'Snippet1',
      issueDate: '2017-11-13',
      senderId: '0088:9482348239847239874',
      receiverId: '0002:FR23342',
      senderName: 'SupplierTradingName Ltd.',
      receiverName: 'BuyerTradingName AS',
      amount: '1656.25',
      currency: 'EUR',
    });
  });

  it.each(files)('reads every field of %s', (name) => {
    const summary = readUblSummary(read(name));
    for (const [field, value] of Object.entries(summary)) {
      expect(value, field).not.toBe('');
    }
    expect(summary.senderId).toMatch(/^\d{4}:\S+$/);
    expect(summary.receiverId).toMatch(/^\d{4}:\S+$/);
    expect(summary.issueDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('falls back to the legal registration name when a party has no trading name', () => {
    expect(readUblSummary(read('vat-category-E.xml')).senderName).toBe('The Sellercompany Incorporated');
  });

  it('keeps the sign of a negative payable amount', () => {
    expect(readUblSummary(read('base-negative-inv-correction.xml')).amount).toBe('-1656.25');
  });

  it('reads documents that use other namespace prefixes', () => {
    const xml = read('base-example.xml').replaceAll('cbc:', 'x:').replace('xmlns:cbc=', 'xmlns:x=');
    expect(xml).not.toContain('cbc:');
    expect(readUblSummary(xml).documentNumber).toBe('Snippet1');
  });

  it('rejects XML that is not UBL', () => {
    expect(codeOf(() => readUblSummary('<?xml version="1.0"?><note><to>Tove</to></note>'))).toBe(
      'DOCEX_UBL_INVALID',
    );
    expect(() => readUblSummary('<note/>')).toThrow(/not a UBL document/);
  });

  it('rejects text that is not well-formed XML', () => {
    expect(() => readUblSummary('<Invoice><cbc:ID>1</Invoice>')).toThrow(/not well-formed XML/);
  });

  it('rejects a UBL invoice without a supplier endpoint', () => {
    const xml = read('base-example.xml').replace(
      /<cbc:EndpointID schemeID="0088">[^<]*<\/cbc:EndpointID>/,
      '',
    );
    expect(() => readUblSummary(xml)).toThrow(/lacks senderId/);
  });

  it('refuses a billion-laughs document without expanding it', () => {
    const lol = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&lol3;</ID></Invoice>`;
    expect(codeOf(() => readUblSummary(lol))).toBe('DOCEX_UBL_INVALID');
    expect(() => readUblSummary(lol)).toThrow(/DTD or entity/);
  });
});
