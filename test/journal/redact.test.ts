import { describe, expect, it } from 'vitest';
import { stripUrlQueries } from '../../src/journal/redact.js';

describe('stripUrlQueries', () => {
  it('removes query and fragment of every URL, keeps the rest of the text', () => {
    expect(stripUrlQueries('a https://h/p?x=1&y=2 b http://q/r#frag c https://plain/path')).toBe(
      'a https://h/p?[redacted] b http://q/r?[redacted] c https://plain/path',
    );
  });
});
