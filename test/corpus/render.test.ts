import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CORPUS } from './corpus.js';
import { BAD_INPUTS_DOC, ISSUE_16_CLASSES, renderBadInputs } from './render.js';

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

describe('the issue-16 classes table', () => {
  it('names only tests that exist, by their title in their file', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const missing = ISSUE_16_CLASSES.flatMap(([, tests]) => tests).filter(([file, title]) => {
      const text = readFileSync(path.join(root, file), 'utf8');
      return ![`'${title}'`, `"${title}"`, `\`${title}\``].some((quoted) => text.includes(quoted));
    });
    expect(missing).toEqual([]);
  });
});
