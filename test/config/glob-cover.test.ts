import { describe, expect, it } from 'vitest';
import { globCovers } from '../../src/config/glob-cover.js';
import { compileGlob } from '../../src/sources/glob.js';

describe('whether an earlier route glob takes every name a later one can', () => {
  it.each([
    ['*.pdf', 'invoice-*.pdf'],
    ['*.pdf', 'INVOICE.PDF'],
    ['*-credit.*', '2026-*-credit.xml'],
    ['?*.csv', 'a?.csv'],
    ['*', '{company}-x.pdf'],
    ['{company}-*.pdf', 'acme-*-2026.pdf'],
    ['{company}-*.pdf', '{company}-*.pdf'],
    ['inv*', 'inv'],
  ])('"%s" covers "%s"', (earlier, later) => {
    expect(globCovers(earlier, later)).toBe(true);
  });

  it.each([
    ['*.pdf', '*.csv'],
    ['invoice-*.pdf', '*.pdf'],
    ['?.pdf', '*.pdf'],
    ['?', '*'],
    ['{company}-*.pdf', '-x.pdf'],
    ['{company}-*.pdf', '*-x.pdf'],
    ['*.pdf', 'a/b.pdf'],
    // Not judged: classes, groups, escapes and ** are never said to cover or be covered.
    ['*.{pdf,csv}', 'a.pdf'],
    ['*.pdf', '[ab].pdf'],
    ['**', 'a.pdf'],
    ['*\\*.pdf', 'x*.pdf'],
    ['??.pdf', '\u{1F600}.pdf'.replace('.pdf', 'x.pdf')],
  ])('"%s" does not cover (or is not judged to cover) "%s"', (earlier, later) => {
    expect(globCovers(earlier, later)).toBe(false);
  });

  it('agrees with the compiled globs on the names it says are covered', () => {
    const names = [
      'invoice-1.pdf',
      'INVOICE-2.PDF',
      'x-credit.xml',
      'ab.csv',
      'acme-1-2026.pdf',
      '.hidden.pdf',
    ];
    for (const [earlier, later] of [
      ['*.pdf', 'invoice-*.pdf'],
      ['*-credit.*', '*-credit.xml'],
      ['?*.csv', 'a?.csv'],
      ['*.pdf', '.*.pdf'],
    ] as const) {
      expect(globCovers(earlier, later)).toBe(true);
      for (const name of names) {
        if (compileGlob(later).test(name))
          expect(compileGlob(earlier).test(name), `${earlier} ${name}`).toBe(true);
      }
    }
  });
});
