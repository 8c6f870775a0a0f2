import { describe, expect, it } from 'vitest';
import {
  checkPayloadRules,
  isEncryptedIdentifier,
  normalisePayload,
  type PayloadEndpoint,
  payloadViolationStatus,
} from '../../src/domain/payload-rules.js';
import type { ChannelIdentifier, PayloadJobRequest, Workflow } from '../../src/domain/wire.js';

function workflow(overrides: Partial<Workflow> = {}): Workflow {
  return {
    id: 'wf_test',
    name: 'Test',
    enabled: true,
    validated: true,
    tasks: [{ type: 'EMAIL', order: 1 }],
    inputSource: { type: 'PAYLOAD_WORD' },
    companyId: 'cmp_a',
    departmentId: 'dep_a',
    ...overrides,
  };
}

const ids = (pairs: Record<string, string>): ChannelIdentifier[] =>
  Object.entries(pairs).map(([kind, value]) => ({ kind, value }));

function request(
  channelIdentifiers: ChannelIdentifier[],
  overrides: Partial<PayloadJobRequest> = {},
): PayloadJobRequest {
  return {
    workflowId: 'wf_test',
    jobName: 'job',
    filename: 'letter.pdf',
    ...overrides,
    payload: {
      channelIdentifiers,
      extraInfoIdentifiers: [],
      templateData: { name: 'x' },
      ...overrides.payload,
    },
  };
}

const EMAIL = { EMAIL_ADDRESS: 'a@example.com' };
const PRINT_ADDRESS = {
  ADDRESS_FIRST_NAME: 'Ann',
  ADDRESS_LAST_NAME: 'Peeters',
  ADDRESS_STREET: 'Kerkstraat',
  ADDRESS_STREET_NUMBER: '12',
  ADDRESS_POSTAL_CODE: '1000',
  ADDRESS_CITY: 'Brussel',
  ADDRESS_COUNTRY_CODE: 'BE',
};

function check(
  wf: Partial<Workflow>,
  channel: ChannelIdentifier[],
  opts: { endpoint?: PayloadEndpoint; req?: Partial<PayloadJobRequest>; departments?: string[] } = {},
) {
  return checkPayloadRules({
    endpoint: opts.endpoint ?? 'payload-word',
    workflow: workflow(wf),
    request: request(channel, opts.req),
    ...(opts.departments ? { callerDepartmentIds: opts.departments } : {}),
  });
}

const print = { tasks: [{ type: 'EASY_PRINT', order: 1 }] };

describe('checkPayloadRules', () => {
  it('accepts a complete EMAIL payload-word request', () => {
    expect(check({}, ids(EMAIL))).toEqual([]);
  });

  describe('rule 1: the workflow', () => {
    it('rejects a disabled, not validated workflow and stops there', () => {
      const v = check({ enabled: false, validated: false }, []);
      expect(v.map((x) => x.message)).toEqual([
        'workflow wf_test is not enabled',
        'workflow wf_test is not validated',
      ]);
      expect(v.every((x) => x.rule === 1 && x.status === 400 && x.field === 'workflowId')).toBe(true);
    });

    it('rejects an input source that does not match the endpoint', () => {
      const v = check({}, ids(EMAIL), { endpoint: 'payload-pdf' });
      expect(v).toEqual([
        {
          rule: 1,
          status: 400,
          field: 'workflowId',
          message: 'workflow wf_test has input source PAYLOAD_WORD; /jobs/payload-pdf needs PAYLOAD_PDF',
        },
      ]);
      expect(
        check({ inputSource: { type: 'PAYLOAD_PDF' } }, ids(EMAIL), { endpoint: 'payload-pdf' }),
      ).toEqual([]);
    });

    it('rejects a workflow of a department the caller cannot use, only when departments are given', () => {
      expect(check({}, ids(EMAIL), { departments: ['dep_b'] })[0]?.message).toBe(
        "workflow wf_test belongs to department dep_a, not one of the caller's",
      );
      expect(check({}, ids(EMAIL), { departments: ['dep_b', 'dep_a'] })).toEqual([]);
    });
  });

  describe('rule 2: payload-pdf filename', () => {
    const pdfWf = { inputSource: { type: 'PAYLOAD_PDF' } };
    it('answers 415 for a filename not ending in .pdf', () => {
      const v = check(pdfWf, ids(EMAIL), { endpoint: 'payload-pdf', req: { filename: 'letter.docx' } });
      expect(v).toEqual([
        {
          rule: 2,
          status: 415,
          field: 'filename',
          message: 'filename "letter.docx" must end with .pdf for /jobs/payload-pdf',
        },
      ]);
      expect(payloadViolationStatus(v)).toBe(415);
    });
    it('accepts .PDF in any case', () => {
      expect(check(pdfWf, ids(EMAIL), { endpoint: 'payload-pdf', req: { filename: 'A.PDF' } })).toEqual([]);
    });
  });

  describe('rule 3: templateData on payload-word', () => {
    it('requires templateData on payload-word but not on payload-pdf', () => {
      const req = {
        payload: { channelIdentifiers: ids(EMAIL), extraInfoIdentifiers: [], templateData: undefined },
      };
      const v = check({}, ids(EMAIL), { req });
      expect(v).toEqual([
        {
          rule: 3,
          status: 400,
          field: 'payload.templateData',
          message: 'payload.templateData is required for /jobs/payload-word',
        },
      ]);
      expect(payloadViolationStatus(v)).toBe(400);
      expect(
        check({ inputSource: { type: 'PAYLOAD_PDF' } }, ids(EMAIL), { endpoint: 'payload-pdf', req }),
      ).toEqual([]);
    });
  });

  describe('rule 4: print workflows take the structured address', () => {
    it('accepts a full structured address', () => {
      expect(check(print, ids(PRINT_ADDRESS))).toEqual([]);
    });
    it('rejects kind ADDRESS on a print workflow', () => {
      const v = check(print, [
        ...ids(PRINT_ADDRESS),
        { kind: 'ADDRESS', value: 'Kerkstraat 12, 1000 Brussel' },
      ]);
      expect(v).toEqual([
        {
          rule: 4,
          status: 400,
          field: 'payload.channelIdentifiers[7].kind',
          message:
            'kind ADDRESS is not allowed on a print workflow (EASY_PRINT, EASY_PRINT_FR); use the structured ADDRESS_* kinds',
        },
      ]);
    });
    it('allows kind ADDRESS on a non-print workflow', () => {
      expect(check({}, [...ids(EMAIL), { kind: 'ADDRESS', value: 'x' }])).toEqual([]);
    });
    it('rejects a print workflow request without any structured address', () => {
      const v = check({ tasks: [{ type: 'EASY_PRINT_FR', order: 1 }] }, ids(EMAIL));
      expect(v).toHaveLength(1);
      expect(v[0]?.rule).toBe(4);
      expect(v[0]?.message).toMatch(
        /^a print workflow needs structured address identifiers: ADDRESS_POSTAL_CODE/,
      );
    });
  });

  describe('rule 5: structured address validation', () => {
    it('ignores empty structured identifiers', () => {
      expect(check(print, ids({ ...PRINT_ADDRESS, ADDRESS_BOX: '', ADDRESS_COMPANY_NAME: '  ' }))).toEqual(
        [],
      );
    });
    it('rejects values over the maximum length', () => {
      const v = check(print, ids({ ...PRINT_ADDRESS, ADDRESS_STREET_NUMBER: '12345678901' }));
      expect(v).toEqual([
        {
          rule: 5,
          status: 400,
          field: 'payload.channelIdentifiers[3].value',
          message: 'ADDRESS_STREET_NUMBER is 11 characters long; at most 10 allowed',
        },
      ]);
    });
    it('accepts a lower-case country code and rejects one that is not two letters', () => {
      expect(check(print, ids({ ...PRINT_ADDRESS, ADDRESS_COUNTRY_CODE: 'be' }))).toEqual([]);
      expect(check(print, ids({ ...PRINT_ADDRESS, ADDRESS_COUNTRY_CODE: 'B1' }))[0]?.message).toBe(
        'ADDRESS_COUNTRY_CODE "B1" is not an ISO 3166 alpha-2 code',
      );
    });
    it('rejects ADDRESS_PO_BOX combined with street fields, on any workflow', () => {
      const v = check(
        {},
        ids({ ...EMAIL, ADDRESS_PO_BOX: '55', ADDRESS_STREET: 'Kerkstraat', ADDRESS_BOX: 'b' }),
      );
      expect(v).toEqual([
        {
          rule: 5,
          status: 400,
          field: 'payload.channelIdentifiers',
          message: 'ADDRESS_PO_BOX cannot be combined with ADDRESS_STREET, ADDRESS_BOX',
        },
      ]);
    });
  });

  describe('rule 6: structured address requirements', () => {
    const without = (...kinds: string[]) =>
      ids(Object.fromEntries(Object.entries(PRINT_ADDRESS).filter(([k]) => !kinds.includes(k))));
    it('needs postal code, city and country code', () => {
      expect(check(print, without('ADDRESS_CITY', 'ADDRESS_COUNTRY_CODE')).map((v) => v.message)).toEqual([
        'print address is missing ADDRESS_CITY, ADDRESS_COUNTRY_CODE',
      ]);
    });
    it('needs a company name or first and last name', () => {
      expect(check(print, without('ADDRESS_LAST_NAME')).map((v) => [v.rule, v.message])).toEqual([
        [6, 'print address needs ADDRESS_COMPANY_NAME or both ADDRESS_FIRST_NAME and ADDRESS_LAST_NAME'],
      ]);
      expect(
        check(print, [
          ...without('ADDRESS_LAST_NAME', 'ADDRESS_FIRST_NAME'),
          ...ids({ ADDRESS_COMPANY_NAME: 'Acme' }),
        ]),
      ).toEqual([]);
    });
    it('needs street with number, or a PO box', () => {
      expect(check(print, without('ADDRESS_STREET_NUMBER')).map((v) => v.message)).toEqual([
        'print address needs ADDRESS_STREET and ADDRESS_STREET_NUMBER, or ADDRESS_PO_BOX',
      ]);
      expect(
        check(print, [
          ...without('ADDRESS_STREET', 'ADDRESS_STREET_NUMBER'),
          ...ids({ ADDRESS_PO_BOX: '55' }),
        ]),
      ).toEqual([]);
    });
  });

  describe('rule 7: channel requirements per task', () => {
    it('needs EMAIL_ADDRESS for EMAIL and ERDS', () => {
      expect(check({}, []).map((v) => v.message)).toEqual(['the EMAIL task needs EMAIL_ADDRESS']);
      expect(check({ tasks: [{ type: 'ERDS' }] }, []).map((v) => v.message)).toEqual([
        'the ERDS task needs EMAIL_ADDRESS',
      ]);
    });
    it('needs an identity for QERDS', () => {
      const qerds = { tasks: [{ type: 'QERDS' }] };
      expect(check(qerds, ids(EMAIL)).map((v) => v.message)).toEqual([
        'the QERDS task needs one of: COMPANY_IDENTIFICATION_NUMBER or (FIRST_NAME, LAST_NAME, BIRTH_DATE) or ' +
          '(FIRST_NAME, LAST_NAME, ADDRESS_POSTAL_CODE, ADDRESS_STREET_NUMBER)',
      ]);
      expect(
        check(qerds, ids({ ...EMAIL, FIRST_NAME: 'A', LAST_NAME: 'B', BIRTH_DATE: '1990-01-01' })),
      ).toEqual([]);
      expect(
        check(
          qerds,
          ids({
            ...EMAIL,
            FIRST_NAME: 'A',
            LAST_NAME: 'B',
            ADDRESS_POSTAL_CODE: '1000',
            ADDRESS_STREET_NUMBER: '1',
          }),
        ),
      ).toEqual([]);
    });
    it('needs a national register number or company number with partition for EBOX', () => {
      const ebox = { tasks: [{ type: 'EBOX' }] };
      expect(check(ebox, ids({ COMPANY_IDENTIFICATION_NUMBER: '0123456789' })).map((v) => v.message)).toEqual(
        [
          'the EBOX task needs one of: NATIONAL_REGISTER_NUMBER or (COMPANY_IDENTIFICATION_NUMBER, EBOX_RECIPIENT_PARTITION)',
        ],
      );
      expect(check(ebox, ids({ NATIONAL_REGISTER_NUMBER: '90010112345' }))).toEqual([]);
    });
    it('needs both token set values for DOCPORTAL', () => {
      const dp = { tasks: [{ type: 'DOCPORTAL' }] };
      expect(check(dp, ids({ DOCPORTAL_TOKEN_SET_VALUE1: 'a' })).map((v) => v.message)).toEqual([
        'the DOCPORTAL task needs DOCPORTAL_TOKEN_SET_VALUE2 (or DOCCLE_TOKEN_SET_VALUE2)',
      ]);
      expect(check(dp, ids({ DOCPORTAL_TOKEN_SET_VALUE1: 'a', DOCPORTAL_TOKEN_SET_VALUE2: 'b' }))).toEqual(
        [],
      );
    });
    it("takes the reference's DOCCLE_* spelling of the DOCPORTAL kinds, alone or mixed", () => {
      const dp = { tasks: [{ type: 'DOCPORTAL' }] };
      expect(check(dp, ids({ DOCCLE_TOKEN_SET_VALUE1: 'a', DOCCLE_TOKEN_SET_VALUE2: 'b' }))).toEqual([]);
      expect(check(dp, ids({ DOCCLE_TOKEN_SET_VALUE1: 'a', DOCPORTAL_TOKEN_SET_VALUE2: 'b' }))).toEqual([]);
      expect(
        check(
          dp,
          ids({ DOCCLE_TOKEN_SET_VALUE1: 'a', DOCCLE_RECEIVER_ID: 'r', DOCCLE_TOKEN_SET_END_DATE: 'd' }),
        ),
      ).toMatchObject([
        {
          rule: 7,
          message: 'the DOCPORTAL task needs DOCPORTAL_TOKEN_SET_VALUE2 (or DOCCLE_TOKEN_SET_VALUE2)',
        },
      ]);
    });
    it('rejects a PEPPOL task on a payload workflow', () => {
      expect(check({ tasks: [{ type: 'PEPPOL' }] }, []).map((v) => v.message)).toEqual([
        'workflow wf_test has a PEPPOL task, which payload workflows do not support',
      ]);
    });
    it('rejects an unknown channel identifier kind', () => {
      expect(check({}, [...ids(EMAIL), { kind: 'SHOE_SIZE', value: '44' }])).toEqual([
        {
          rule: 7,
          status: 400,
          field: 'payload.channelIdentifiers[1].kind',
          message: 'unknown channel identifier kind "SHOE_SIZE"',
        },
      ]);
    });
  });

  describe('rule 8: payment collection', () => {
    it('needs amount, due date and communication when hasPom, but not the description', () => {
      expect(
        check({ hasPom: true }, ids({ ...EMAIL, INVOICE_AMOUNT: '10' })).map((v) => [v.rule, v.message]),
      ).toEqual([[8, 'payment collection (hasPom) needs INVOICE_DUE_DATE, INVOICE_COMMUNICATION']]);
      const full = {
        ...EMAIL,
        INVOICE_AMOUNT: '10',
        INVOICE_DUE_DATE: '2026-12-01',
        INVOICE_COMMUNICATION: '+++1+++',
      };
      expect(check({ hasPom: true }, ids(full))).toEqual([]);
      expect(check({ hasPom: false }, ids(EMAIL))).toEqual([]);
    });
  });

  describe('rule 9: invoice tracking', () => {
    it('needs reference, amount, due date and communication when tracking is enabled', () => {
      const tracking = { invoiceConfiguration: { enableInvoiceTracking: true } };
      expect(check(tracking, ids(EMAIL)).map((v) => [v.rule, v.message])).toEqual([
        [
          9,
          'invoice tracking needs INVOICE_REFERENCE, INVOICE_AMOUNT, INVOICE_DUE_DATE, INVOICE_COMMUNICATION',
        ],
      ]);
      const full = {
        ...EMAIL,
        INVOICE_REFERENCE: 'F1',
        INVOICE_AMOUNT: '1',
        INVOICE_DUE_DATE: 'd',
        INVOICE_COMMUNICATION: 'c',
      };
      expect(check(tracking, ids(full))).toEqual([]);
      expect(check({ invoiceConfiguration: { enableInvoiceTracking: false } }, ids(EMAIL))).toEqual([]);
    });
  });

  describe('rule 10: encryption', () => {
    it('accepts mustBeEncrypted on a supported kind', () => {
      expect(check({}, [{ kind: 'EMAIL_ADDRESS', value: 'a@b.c', mustBeEncrypted: true }])).toEqual([]);
    });
    it('rejects mustBeEncrypted and isEncrypted on kinds that do not support it', () => {
      const v = check({}, [
        ...ids(EMAIL),
        { kind: 'INVOICE_AMOUNT', value: '1', mustBeEncrypted: true },
        { kind: 'PHONE_NUMBER', value: '1', isEncrypted: true },
      ]);
      expect(v).toEqual([
        {
          rule: 10,
          status: 400,
          field: 'payload.channelIdentifiers[1].mustBeEncrypted',
          message: 'kind INVOICE_AMOUNT does not support encryption; mustBeEncrypted may not be true',
        },
        {
          rule: 10,
          status: 400,
          field: 'payload.channelIdentifiers[2].isEncrypted',
          message: 'kind PHONE_NUMBER does not support encryption; isEncrypted may not be true',
        },
      ]);
    });
    it('allows encryption on the same DOCCLE_* kinds as their DOCPORTAL_* spelling, and no others', () => {
      const v = check({}, [
        ...ids(EMAIL),
        { kind: 'DOCCLE_TOKEN_SET_VALUE1', value: 't1', mustBeEncrypted: true },
        { kind: 'DOCCLE_RECEIVER_ID', value: 'r', isEncrypted: true },
        { kind: 'DOCPORTAL_TOKEN_SET_VALUE2', value: 't2', mustBeEncrypted: true },
        { kind: 'DOCCLE_TOKEN_SET_START_DATE', value: '2026-01-01', mustBeEncrypted: true },
        { kind: 'DOCPORTAL_TOKEN_SET_END_DATE', value: '2026-12-31', mustBeEncrypted: true },
      ]);
      expect(v.map((x) => x.field)).toEqual([
        'payload.channelIdentifiers[4].mustBeEncrypted',
        'payload.channelIdentifiers[5].mustBeEncrypted',
      ]);
      expect(v[0]?.message).toBe(
        'kind DOCCLE_TOKEN_SET_START_DATE does not support encryption; mustBeEncrypted may not be true',
      );
    });
    it('accepts the flag on any extra info name', () => {
      const req = {
        payload: {
          channelIdentifiers: ids(EMAIL),
          extraInfoIdentifiers: [{ name: 'x', value: 'y', mustBeEncrypted: true }],
          templateData: {},
        },
      };
      expect(check({}, ids(EMAIL), { req })).toEqual([]);
    });
    it('always treats a national register number as encrypted', () => {
      expect(isEncryptedIdentifier({ kind: 'NATIONAL_REGISTER_NUMBER', value: '1' })).toBe(true);
      expect(isEncryptedIdentifier({ kind: 'EMAIL_ADDRESS', value: '1' })).toBe(false);
      expect(isEncryptedIdentifier({ kind: 'EMAIL_ADDRESS', value: '1', isEncrypted: true })).toBe(true);
    });
  });
});

describe('normalisePayload', () => {
  it('keeps the DOCCLE_* spelling the user wrote', () => {
    const written = ids({ ...EMAIL, DOCCLE_TOKEN_SET_VALUE1: 'a', DOCPORTAL_TOKEN_SET_VALUE2: 'b' });
    expect(normalisePayload(request(written)).payload.channelIdentifiers).toEqual(written);
  });

  it('drops empty structured address identifiers and upper-cases the country code', () => {
    const out = normalisePayload(
      request(ids({ ...EMAIL, ADDRESS_BOX: '', ADDRESS_COUNTRY_CODE: 'be', INVOICE_DESCRIPTION: '' })),
    );
    expect(out.payload.channelIdentifiers).toEqual(
      ids({ ...EMAIL, ADDRESS_COUNTRY_CODE: 'BE', INVOICE_DESCRIPTION: '' }),
    );
  });
});
