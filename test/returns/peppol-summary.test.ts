import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describePeppolDocument } from '../../src/returns/peppol-summary.js';

const record = {
  id: 'ppl_1',
  senderId: '0208:0123456789',
  receiverId: '0208:0987654321',
  documentType: 'Invoice',
  documentNumber: 'REC-7',
  issueDate: '2026-11-01',
  createdAt: '2026-11-21T10:00:00.000Z',
};

describe('Peppol document summary', () => {
  it('takes sender, number, parties and amount from the UBL credit note itself', () => {
    const xml = readFileSync(
      new URL('../../src/sandbox/seed-data/peppol/base-creditnote-correction.xml', import.meta.url),
      'utf8',
    );
    const { summary, names, ublError } = describePeppolDocument(record, xml, 1234);
    expect(ublError).toBeUndefined();
    expect(summary).toMatchObject({
      id: 'ppl_1',
      documentType: 'CreditNote',
      documentNumber: 'Snippet1',
      sender: { id: '0088:9482348239847239874' },
      currency: 'EUR',
      receivedAt: record.createdAt,
      size: 1234,
    });
    expect(summary.amount).toMatch(/^\d+(\.\d+)?$/);
    expect(names.xml).toBe('0088-9482348239847239874_Snippet1_ppl_1.xml');
    expect(summary.xmlFile).toBe(names.xml);
  });

  it('describes a document that is not UBL from the service record and says why', () => {
    const { summary, names, ublError } = describePeppolDocument(record, '<Order><ID>1</ID></Order>', 25);
    expect(ublError).toMatch(/not a UBL document/);
    expect(summary).toMatchObject({
      documentType: 'Invoice',
      documentNumber: 'REC-7',
      sender: { id: '0208:0123456789', name: '' },
      receiver: { id: '0208:0987654321' },
      ublError,
    });
    expect(names.json).toBe('0208-0123456789_REC-7_ppl_1.json');
  });

  it('refuses to read a document with a DTD (entities are never expanded)', () => {
    const xml = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><Invoice>&a;</Invoice>';
    expect(describePeppolDocument(record, xml, xml.length).ublError).toMatch(/DTD/);
  });
});
