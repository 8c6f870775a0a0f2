import { describe, expect, it } from 'vitest';
import { peppolFileNames, sanitizePart } from '../../src/returns/peppol-names.js';

describe('Peppol file names', () => {
  it('joins sender, number and id with underscores, the participant id colon made safe', () => {
    expect(
      peppolFileNames({ senderId: '0208:0123456789', documentNumber: 'INV-2026/001', id: 'ppl_1' }),
    ).toEqual({
      stem: '0208-0123456789_INV-2026-001_ppl_1',
      xml: '0208-0123456789_INV-2026-001_ppl_1.xml',
      json: '0208-0123456789_INV-2026-001_ppl_1.json',
    });
  });

  it('cannot climb out of the folder, hide the file or start like an option', () => {
    expect(sanitizePart('../../etc/passwd')).toBe('etc-passwd');
    expect(sanitizePart('..')).toBe('unknown');
    expect(sanitizePart('.hidden')).toBe('hidden');
    expect(sanitizePart('-rf')).toBe('rf');
    expect(sanitizePart('a\\b')).toBe('a-b');
  });

  it('replaces control characters, spaces and non-ASCII, and collapses the runs', () => {
    expect(sanitizePart('A\nB\tC\u0000D')).toBe('A-B-C-D');
    expect(sanitizePart('Facture n° 12 / été')).toBe('Facture-n-12-ete');
    expect(sanitizePart('061828591|01/10/2020|0|1.1|0|1')).toBe('061828591-01-10-2020-0-1.1-0-1');
  });

  it('gives "unknown" for an empty or all-unsafe value and caps a part at 80 characters', () => {
    expect(sanitizePart('')).toBe('unknown');
    expect(sanitizePart('///')).toBe('unknown');
    expect(sanitizePart('x'.repeat(500))).toHaveLength(80);
    expect(sanitizePart(`${'y'.repeat(79)}-z`)).toBe('y'.repeat(79));
  });
});
