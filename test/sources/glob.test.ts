import { describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import { compileGlob, createNameFilter, matchesGlob } from '../../src/sources/glob.js';

describe('matchesGlob', () => {
  it.each([
    ['invoice.pdf', '*.pdf', true],
    ['INVOICE.PDF', '*.pdf', true],
    ['invoice.pdf.done', '*.pdf', false],
    ['invoice.csv', '*.pdf', false],
    ['a b é 日本.pdf', '*.pdf', true],
    ['line\nbreak.pdf', '*.pdf', true],
    ['inv-7.pdf', 'inv-?.pdf', true],
    ['inv-17.pdf', 'inv-?.pdf', false],
    ['data.csv', '*.{pdf,csv,xml}', true],
    ['data.zip', '*.{pdf,csv,xml}', false],
    ['inv-b.pdf', 'inv-[a-c].pdf', true],
    ['inv-d.pdf', 'inv-[a-c].pdf', false],
    ['inv-d.pdf', 'inv-[!a-c].pdf', true],
    ['a+b(1).pdf', 'a+b(1).pdf', true],
    ['axb(1).pdf', 'a.b(1).pdf', false],
    ['star*.pdf', 'star\\*.pdf', true],
    ['starx.pdf', 'star\\*.pdf', false],
    ['deep.pdf', '**.pdf', true],
    ['anything', '*', true],
    ['.hidden.pdf', '*', true],
    ['~$letter.docx', '~$*', true],
    ['a+b1.pdf', 'a+b(1).pdf', false],
    ['invoice (1).pdf', 'invoice (?).pdf', true],
    ['a|b.pdf', 'a|b.pdf', true],
    ['a.pdf', 'a|b.pdf', false],
    ['!draft.pdf', '!draft.pdf', true],
    ['final.pdf', '!draft.pdf', false],
    ['inv.PDF', '*.{pdf,xml}', true],
    ['inv-2.pdf', 'inv-{1,2{a,b}}.pdf', false],
    ['inv-2b.pdf', 'inv-{1,2{a,b}}.pdf', true],
    ['acme/invoices/a.pdf', '*.pdf', false],
    ['acme/invoices/a.pdf', '**/*.pdf', true],
    ['a.pdf', '**/*.pdf', true],
    ['acme/invoices/a.pdf', 'acme/*/*.pdf', true],
    ['acme/reminders/x/a.pdf', 'acme/*/*.pdf', false],
  ])('%j against %j → %s', (name, pattern, expected) => {
    expect(matchesGlob(name, pattern)).toBe(expected);
  });

  it.each([
    ['a.pdf', '*.{pdf}', true],
    ['A.PDF', '*.{pdf}', true],
    ['a.xml', '*.{pdf}', false],
    ['abc', 'a{b}c', true],
    ['a{b}c', 'a{b}c', false],
    ['acd', 'a{b,{c}}d', true],
    ['abd', 'a{b,{c}}d', true],
  ])(
    'takes a brace group of one alternative as that alternative, as the matcher before picomatch did: %j against %j → %s',
    (name, pattern, expected) => {
      expect(matchesGlob(name, pattern)).toBe(expected);
    },
  );

  it.each([
    ['\ninvoice.pdf', '*'],
    ['\ninvoice.pdf', '*.pdf'],
    ['two\nlines.pdf', '**'],
    ['two\nlines.pdf', '**.pdf'],
    ['two\nlines.pdf', 'two*'],
  ])(
    'takes a name with a newline as any other, so it is taken and refused for its name rather than left unseen: %j against %j',
    (name, pattern) => {
      expect(matchesGlob(name, pattern)).toBe(true);
    },
  );

  it('is case-sensitive only when asked', () => {
    expect(matchesGlob('A.PDF', '*.pdf', { caseSensitive: true })).toBe(false);
    expect(matchesGlob('a.pdf', '*.pdf', { caseSensitive: true })).toBe(true);
  });

  it.each(['', 'a[b', 'a{b,c', 'trailing\\', 'inv-[z-a].pdf', '{}', '{{}}'])(
    'rejects the invalid glob %j with a stable code',
    (pattern) => {
      let caught: unknown;
      try {
        compileGlob(pattern);
      } catch (err) {
        caught = err;
      }
      expect(isDocexError(caught, 'DOCEX_SOURCE_GLOB_INVALID')).toBe(true);
    },
  );

  it.each([
    ['a'.repeat(70_000), /invalid glob "a{100}…": 70000 characters: a glob has at most 65536$/],
    [
      '('.repeat(40_000),
      /40000 characters \(80000 with '\(', '\)' and '\|' escaped\): a glob has at most 65536$/,
    ],
  ])(
    'refuses a glob longer than picomatch reads with the stable code and a short message, not a plain SyntaxError (%#)',
    (pattern, message) => {
      let caught: unknown;
      try {
        compileGlob(pattern);
      } catch (err) {
        caught = err;
      }
      expect(isDocexError(caught, 'DOCEX_SOURCE_GLOB_INVALID')).toBe(true);
      expect((caught as Error).message).toMatch(message);
      expect((caught as Error).message.length).toBeLessThan(300);
    },
  );
});

describe('createNameFilter', () => {
  it('takes every name when include is empty', () => {
    const accepts = createNameFilter({});
    expect(accepts('x.bin')).toBe(true);
  });

  it('takes included names and lets exclude win', () => {
    const accepts = createNameFilter({ include: ['*.pdf', '*.zip'], exclude: ['draft-*'] });
    expect(accepts('invoice.pdf')).toBe(true);
    expect(accepts('batch.ZIP')).toBe(true);
    expect(accepts('draft-invoice.pdf')).toBe(false);
    expect(accepts('notes.txt')).toBe(false);
  });
});
