import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORPUS } from './corpus.js';
import { BAD_INPUTS_DOC, renderBadInputs } from './render.js';

describe('docs/bad-inputs.md', () => {
  it('matches the corpus table (regenerate with `npx tsx test/corpus/render.ts`)', () => {
    expect(readFileSync(BAD_INPUTS_DOC, 'utf8')).toBe(renderBadInputs());
  });

  it('lists every corpus case once', () => {
    const doc = renderBadInputs();
    for (const c of CORPUS) expect(doc.split(`| ${c.name.replace(/\|/g, '\\|')} |`)).toHaveLength(2);
  });
});

describe('the corpus table', () => {
  it('names each case once and drops each file name once per folder', () => {
    expect(new Set(CORPUS.map((c) => c.name)).size).toBe(CORPUS.length);
    expect(new Set(CORPUS.map((c) => `${c.folder}/${c.file}`)).size).toBe(CORPUS.length);
  });
});
