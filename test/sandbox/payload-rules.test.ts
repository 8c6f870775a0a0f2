import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, startHarness } from './webhooks-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

const W = SEED.workflows;
const ids = (pairs: Record<string, string>) =>
  Object.entries(pairs).map(([kind, value]) => ({ kind, value }));
function body(workflowId: string, channel: Record<string, string>, extra: Record<string, unknown> = {}) {
  return {
    workflowId,
    jobName: 'job',
    filename: 'letter.pdf',
    payload: { channelIdentifiers: ids(channel), extraInfoIdentifiers: [], templateData: { name: 'Ann' } },
    ...extra,
  };
}
const PRINT = {
  ADDRESS_COMPANY_NAME: 'Acme',
  ADDRESS_STREET: 'Kerkstraat',
  ADDRESS_STREET_NUMBER: '1',
  ADDRESS_POSTAL_CODE: '1000',
  ADDRESS_CITY: 'Brussel',
  ADDRESS_COUNTRY_CODE: 'be',
};
const POM = {
  INVOICE_AMOUNT: '10.00',
  INVOICE_DUE_DATE: '2026-12-31',
  INVOICE_COMMUNICATION: '+++123/4567/89012+++',
};

describe('payload rules through the sandbox', () => {
  it('accepts a valid payload-word job on the seeded EMAIL workflow', async () => {
    const res = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordEmail, { EMAIL_ADDRESS: 'a@b.example' }),
    });
    expect(res.status).toBe(201);
    expect(typeof res.body.id).toBe('string');
  });

  it('accepts a payload-pdf job on the print workflow with payment collection', async () => {
    const res = await h.call('POST', '/jobs/payload-pdf', {
      body: body(W.payloadPdfPrint, { ...PRINT, ...POM }),
    });
    expect(res.status).toBe(201);
    expect(res.body.fileUploadUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/upload\/.*signature=/);
  });

  it('answers 415 for a payload-pdf filename that is not .pdf', async () => {
    const res = await h.call('POST', '/jobs/payload-pdf', {
      body: body(W.payloadPdfPrint, { ...PRINT, ...POM }, { filename: 'a.docx' }),
    });
    expect(res.status).toBe(415);
  });

  it('answers 400 naming the missing payment collection kinds', async () => {
    const res = await h.call('POST', '/jobs/payload-pdf', { body: body(W.payloadPdfPrint, PRINT) });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain(
      'payment collection (hasPom) needs INVOICE_AMOUNT, INVOICE_DUE_DATE, INVOICE_COMMUNICATION',
    );
  });

  it('answers 400 for ADDRESS on the French print workflow', async () => {
    const res = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordPrintFr, { ...PRINT, ADDRESS: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({
      field: 'payload.channelIdentifiers[6].kind',
      message: expect.stringContaining('ADDRESS is not allowed'),
    });
  });

  it('answers 400 for QERDS, EBOX and DOCPORTAL requirements of the seeded workflows', async () => {
    const qerds = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordQerds, { EMAIL_ADDRESS: 'a@b.example' }),
    });
    expect(qerds.status).toBe(400);
    expect(qerds.body.detail).toContain('the QERDS task needs one of');
    const ebox = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordEbox, { EMAIL_ADDRESS: 'a@b.example' }),
    });
    expect(ebox.body.detail).toContain('the EBOX task needs one of');
    const docportal = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordDocportal, {
        DOCPORTAL_TOKEN_SET_VALUE1: 'a',
        DOCPORTAL_TOKEN_SET_VALUE2: 'b',
      }),
    });
    expect(docportal.status).toBe(400);
    expect(docportal.body.detail).toContain('invoice tracking needs INVOICE_REFERENCE');
  });

  it("accepts the reference's DOCCLE_* kinds on the DOCPORTAL workflow, encrypted like DOCPORTAL_*", async () => {
    const tracking = {
      INVOICE_REFERENCE: 'INV-1',
      INVOICE_AMOUNT: '10.00',
      INVOICE_DUE_DATE: '2026-12-31',
      INVOICE_COMMUNICATION: '+++123/4567/89012+++',
    };
    const req = body(W.payloadWordDocportal, { DOCCLE_TOKEN_SET_VALUE2: 'b', ...tracking });
    req.payload.channelIdentifiers.push({
      kind: 'DOCCLE_TOKEN_SET_VALUE1',
      value: 'a',
      mustBeEncrypted: true,
    } as {
      kind: string;
      value: string;
    });
    const doccle = await h.call('POST', '/jobs/payload-word', { body: req });
    expect(doccle.status).toBe(201);
    const missing = await h.call('POST', '/jobs/payload-word', {
      body: body(W.payloadWordDocportal, { DOCCLE_TOKEN_SET_VALUE1: 'a', ...tracking }),
    });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain(
      'the DOCPORTAL task needs DOCPORTAL_TOKEN_SET_VALUE2 (or DOCCLE_TOKEN_SET_VALUE2)',
    );
  });

  it('answers 400 for mustBeEncrypted on a kind without encryption', async () => {
    const req = body(W.payloadWordEmail, {});
    req.payload.channelIdentifiers = [
      { kind: 'EMAIL_ADDRESS', value: 'a@b.example' },
      { kind: 'PHONE_NUMBER', value: '+32', mustBeEncrypted: true } as { kind: string; value: string },
    ];
    const res = await h.call('POST', '/jobs/payload-word', { body: req });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({
      field: 'payload.channelIdentifiers[1].mustBeEncrypted',
      message: 'kind PHONE_NUMBER does not support encryption; mustBeEncrypted may not be true',
    });
  });

  it('answers 400 for a payload endpoint on a workflow with another input source', async () => {
    const res = await h.call('POST', '/jobs/payload-word', {
      body: body(W.pdfEmail, { EMAIL_ADDRESS: 'a@b.example' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('/jobs/payload-word needs PAYLOAD_WORD');
  });
});
