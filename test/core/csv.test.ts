import { describe, expect, it } from 'vitest';
import { csvField, csvLine } from '../../src/core/csv.js';

describe('CSV output cells', () => {
  it.each([
    [
      '=HYPERLINK("http://evil.example","open me").pdf',
      `"'=HYPERLINK(""http://evil.example"",""open me"").pdf"`,
    ],
    ['+32 2 555 01 01', "'+32 2 555 01 01"],
    ['-rf invoice.pdf', "'-rf invoice.pdf"],
    ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r=1+1', `"'\r=1+1"`],
  ])('prefixes a text cell that a spreadsheet would run as a formula: %j', (text, written) => {
    expect(csvField(text)).toBe(written);
  });

  it('leaves plain text and numbers as they are, negative numbers included', () => {
    expect(csvLine(['invoice 1.pdf', -5, 12.5, 'a,b', undefined])).toBe('invoice 1.pdf,-5,12.5,"a,b",\r\n');
  });

  it("writes a copy of another system's file unchanged when asked", () => {
    expect(csvLine(['=1+1'], { formulaSafe: false })).toBe('=1+1\r\n');
  });
});
