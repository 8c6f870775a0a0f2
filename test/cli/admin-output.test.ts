import { describe, expect, it } from 'vitest';
import { render, renderTable } from '../../src/cli/output/render.js';
import { usageCsvRow } from '../../src/cli/usage-command.js';
import { csvLine } from '../../src/core/csv.js';

describe('admin output', () => {
  it('pads table columns to the widest cell, flattens arrays and blanks missing values', () => {
    const text = renderTable(
      [
        { id: 'a', name: 'Alpha', tags: ['x', 'y'] },
        { id: 'bbbb', tags: [] },
      ],
      ['id', 'name', 'tags'],
    );
    expect(text).toBe(
      ['id    name   tags', '----  -----  ----', 'a     Alpha  x,y', 'bbbb'].join('\n') + '\n',
    );
  });

  it('keeps a cell on one line and prints JSON unchanged', () => {
    expect(render([{ note: 'two\nlines' }], 'table', ['note'])).toContain('two lines');
    expect(JSON.parse(render({ a: [1, 2] }, 'json'))).toEqual({ a: [1, 2] });
    expect(render('https://x.example/a?b=c', 'table')).toBe('https://x.example/a?b=c\n');
  });

  it('quotes CSV fields holding commas, quotes or line breaks', () => {
    expect(csvLine(['plain', 'a,b', 'say "hi"', 'x\ny', undefined, 3])).toBe(
      'plain,"a,b","say ""hi""","x\ny",,3\r\n',
    );
    expect(
      usageCsvRow({
        id: 'u1',
        timestamp: 't',
        companyId: 'c',
        channel: 'EMAIL',
        unit: 'SENDING',
        quantity: 2,
      }),
    ).toBe('u1,t,c,,,,EMAIL,SENDING,2\r\n');
  });
});
