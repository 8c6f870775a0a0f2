import { describe, expect, it } from 'vitest';
import {
  checkPayloadText,
  describeCodePoint,
  fieldOf,
  MAX_TEXT_PROBLEMS,
} from '../../src/domain/payload-text.js';
import type { PayloadJobRequest } from '../../src/domain/wire.js';

function request(
  ids: Array<[string, string]>,
  templateData: Record<string, unknown> = {},
  extra: Array<[string, string]> = [],
  fields: Partial<PayloadJobRequest> = {},
): PayloadJobRequest {
  return {
    workflowId: 'wf_word',
    jobName: 'letters.csv row 2',
    filename: 'letters-row-2.docx',
    ...fields,
    payload: {
      channelIdentifiers: ids.map(([kind, value]) => ({ kind, value })),
      extraInfoIdentifiers: extra.map(([name, value]) => ({ name, value })),
      templateData,
    },
  };
}

const one = (r: PayloadJobRequest) => {
  const problems = checkPayloadText(r);
  expect(problems).toHaveLength(1);
  return problems[0]!;
};

describe('checkPayloadText', () => {
  it('passes ordinary values: accents, CJK, emoji, RTL script, tabs, and line breaks where text may span lines', () => {
    const r = request(
      [
        ['EMAIL_ADDRESS', 'zoë@example.com'],
        ['ADDRESS_LAST_NAME', 'שרה כהן'],
        ['ADDRESS_COMPANY_NAME', '株式会社テスト 🧾'],
        ['ADDRESS', 'Rue de Rivoli 12\r\n75001 Paris'],
        ['INVOICE_DESCRIPTION', 'Line one\nLine two\twith a tab'],
        ['ADDRESS_STREET', 'שדרות רוטשילד\u200f 12'],
      ],
      { note: 'first line\nsecond line', nested: { list: ['a', 'b\r\nc'] }, amount: 125 },
      [['customerId', 'C001\tX']],
    );
    expect(checkPayloadText(r)).toEqual([]);
  });

  it.each([
    ['NUL', '\u0000', 0x0000],
    ['escape', '\u001b[31m', 0x001b],
    ['DEL', '\u007f', 0x007f],
    ['a C1 control (U+0085 next line)', '\u0085', 0x0085],
    ['a C1 control (U+009B CSI)', '\u009b', 0x009b],
    ['a vertical tab', '\u000b', 0x000b],
    ['a carriage return without a line feed', '\r', 0x000d],
    ['a lone high surrogate', '\ud800', 0xd800],
    ['a lone low surrogate', '\udfff', 0xdfff],
  ])(
    'refuses %s in template data, naming the field and the code point but not the value',
    (_what, bad, codePoint) => {
      const p = one(request([], { greeting: `Dear secret-name ${bad} rest` }));
      expect(p).toMatchObject({ kind: 'control', field: 'payload.templateData.greeting', codePoint });
      expect(p.message).toContain(`U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`);
      expect(p.message).toContain('at character 18');
      expect(p.message).not.toContain('secret-name');
    },
  );

  it('takes a surrogate pair (an emoji) as one character, not as two lone halves', () => {
    expect(checkPayloadText(request([], { icon: '\ud83e\uddfe' }))).toEqual([]);
    const p = one(request([], { icon: '\ud83e\uddfe\ud83e' }));
    expect(p).toMatchObject({ codePoint: 0xd83e });
    expect(p.message).toContain('at character 2');
  });

  it.each([
    ['EMAIL_ADDRESS', 'a@example.com\nBcc: victim@example.com', 0x000a],
    ['PHONE_NUMBER', '+32 2 123\r\n45 67', 0x000d],
    ['ADDRESS_FIRST_NAME', 'Marie\u2028Dupont', 0x2028],
    ['ADDRESS_CITY', 'Paris\u2029Lyon', 0x2029],
    ['INVOICE_COMMUNICATION', '+++090/9337/55493+++\n', 0x000a],
  ])('refuses a line break in a one-line %s value', (kind, value, codePoint) => {
    const p = one(request([[kind, value]]));
    expect(p).toMatchObject({ kind: 'control', field: 'payload.channelIdentifiers[0].value', codePoint });
    expect(p.message).toContain(`(${kind}) holds a line break`);
    expect(p.message).toContain('this field takes one line');
  });

  it('refuses a line break in jobName, filename, sendingEventExecutionDateUtc, an extra info name and a template data key', () => {
    const fields = [
      checkPayloadText(request([], {}, [], { jobName: 'job\nname' }))[0]?.field,
      checkPayloadText(request([], {}, [], { filename: 'a\n.docx' }))[0]?.field,
      checkPayloadText(request([], {}, [], { sendingEventExecutionDateUtc: '2026-01-01\nT00:00:00Z' }))[0]
        ?.field,
      checkPayloadText(request([], {}, [['customer\nId', '1']]))[0]?.field,
      checkPayloadText(request([], { 'two\nlines': 'x' }))[0]?.field,
    ];
    expect(fields).toEqual([
      'jobName',
      'filename',
      'sendingEventExecutionDateUtc',
      'payload.extraInfoIdentifiers[0].name',
      'payload.templateData["two\\nlines"]',
    ]);
  });

  it.each([
    ['EMAIL_ADDRESS', 'admin\u202e@example.com', 0x202e, 'right-to-left override'],
    ['EMAIL_ADDRESS', 'pay\u200b@example.com', 0x200b, 'zero width space'],
    ['EMAIL_ADDRESS', 'a@ex\u00adample.com', 0x00ad, 'soft hyphen'],
    ['POM_OPT_IN_EMAIL', 'a@example.com\u2060', 0x2060, 'word joiner'],
    ['PHONE_NUMBER', '+32\u200d470123456', 0x200d, 'zero width joiner'],
    ['PEPPOL_RECEIVER_PARTICIPANT_ID', '0208:\u20660123456789\u2069', 0x2066, 'left-to-right isolate'],
    ['PEPPOL_SENDER_PARTICIPANT_ID', '\ufeff0208:0123456789', 0xfeff, 'zero width no-break space'],
    ['COMPANY_IDENTIFICATION_NUMBER', 'BE0123\u200e456789', 0x200e, 'left-to-right mark'],
    ['NATIONAL_REGISTER_NUMBER', '85.07.30\u061c-033.28', 0x061c, 'Arabic letter mark'],
    ['ADDRESS_LAST_NAME', 'Dupont\u202b', 0x202b, 'right-to-left embedding'],
    ['ADDRESS_COMPANY_NAME', 'Acme\u200c SA', 0x200c, 'zero width non-joiner'],
    ['FIRST_NAME', 'Jean\u3164', 0x3164, undefined],
    ['DOCCLE_RECEIVER_ID', 'r-1\u200f', 0x200f, 'right-to-left mark'],
    ['INVOICE_PAY_LINK', 'https://pay.example.com/\u202dabc', 0x202d, 'left-to-right override'],
    ['ADDRESS_POSTAL_CODE', '75001\u{e0041}', 0xe0041, undefined],
  ])(
    'refuses an invisible character in the identifier %s (%s), naming its code point',
    (kind, value, codePoint, name) => {
      const p = one(request([[kind, value]]));
      expect(p).toMatchObject({ kind: 'invisible', field: 'payload.channelIdentifiers[0].value', codePoint });
      expect(p.message).toContain(`(${kind}) holds an invisible character, ${describeCodePoint(codePoint)}`);
      if (name) expect(p.message).toContain(name);
      expect(p.message).not.toContain(value);
    },
  );

  it('refuses an invisible character in workflowId, jobName, filename, a kind and an extra info name, not in free text', () => {
    expect(one(request([], {}, [], { filename: 'invoice\u202efdp.exe.docx' }))).toMatchObject({
      kind: 'invisible',
      field: 'filename',
    });
    expect(one(request([], {}, [], { jobName: 'job\u200b' }))).toMatchObject({ field: 'jobName' });
    expect(one(request([['EMAIL\u200b_ADDRESS', 'a@example.com']]))).toMatchObject({
      field: 'payload.channelIdentifiers[0].kind',
    });
    expect(one(request([], {}, [['customer\u200dId', '1']]))).toMatchObject({
      field: 'payload.extraInfoIdentifiers[0].name',
    });
    // Free text may need bidi marks and joiners (Persian, Arabic, emoji sequences).
    const free = request(
      [
        ['ADDRESS', 'خیابان\u200cآزادی ۱۲'],
        ['INVOICE_DESCRIPTION', 'Family \u{1f468}\u200d\u{1f469}'],
      ],
      { body: 'مرحبا\u200f 12' },
      [['note', '\u200f']],
    );
    expect(checkPayloadText(free)).toEqual([]);
  });

  it('does not echo an unknown kind in its message', () => {
    const p = one(request([['<script>', 'a\u0000']]));
    expect(p.message).not.toContain('<script>');
    expect(p.field).toBe('payload.channelIdentifiers[0].value');
  });

  it('walks template data nested 90 levels deep without recursion and names the path', () => {
    let deep: Record<string, unknown> = { leaf: 'x\u0007' };
    for (let i = 0; i < 90; i++) deep = { n: deep };
    const p = one(request([], { root: deep }));
    expect(p.field).toBe(`payload.templateData.root${'.n'.repeat(90)}.leaf`);
    expect(p.path).toHaveLength(94);
  });

  it('names array items and odd keys in the path', () => {
    const p = one(request([], { lines: [{ text: 'ok' }, { text: 'x\u0000' }] }));
    expect(p.field).toBe('payload.templateData.lines[1].text');
    expect(fieldOf(['payload', 'templateData', 'a b', 0, 'c\u202e'])).toBe(
      'payload.templateData["a b"][0]["c\\u202e"]',
    );
  });

  it(`reports at most ${MAX_TEXT_PROBLEMS} problems for one request`, () => {
    const data = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, '\u0000']));
    expect(checkPayloadText(request([], data))).toHaveLength(MAX_TEXT_PROBLEMS);
  });
});
