import { describe, expect, it } from 'vitest';
import { entryPath, nameOfBytes } from '../../../src/sources/local/entry-name.js';

describe('nameOfBytes', () => {
  it('gives a UTF-8 name as text, with no raw bytes kept', () => {
    expect(nameOfBytes(Buffer.from('facture été №7.pdf'))).toEqual({ name: 'facture été №7.pdf' });
  });

  it('keeps a real U+FFFD in a UTF-8 name as text', () => {
    expect(nameOfBytes(Buffer.from('odd-\ufffd.pdf'))).toEqual({ name: 'odd-\ufffd.pdf' });
  });

  it('keeps the raw bytes of a Latin-1 name, with U+FFFD for the bad byte in the text', () => {
    const bytes = Buffer.from('facture-\u00e9.pdf', 'latin1');
    expect(nameOfBytes(bytes)).toEqual({ name: 'facture-\ufffd.pdf', raw: bytes });
  });
});

describe('entryPath', () => {
  it('joins a UTF-8 name as a string and a raw name as bytes', () => {
    expect(entryPath('/in', { name: 'a.pdf' })).toBe('/in/a.pdf');
    const raw = Buffer.from([0x61, 0xe9]);
    expect(entryPath('/in', { name: 'a\ufffd', raw })).toEqual(
      Buffer.from([0x2f, 0x69, 0x6e, 0x2f, 0x61, 0xe9]),
    );
  });
});
