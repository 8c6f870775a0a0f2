import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fitName, placeFile } from '../../src/pipeline/place-file.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('fitName', () => {
  it('leaves a name that fits with its suffix alone', () => {
    expect(fitName('invoice 2026-0001.pdf', 12)).toBe('invoice 2026-0001.pdf');
  });

  it('cuts a 250-byte name so that name, suffix and a number stay within 255 bytes, keeping the extension', () => {
    const name = `${'a'.repeat(246)}.pdf`;
    const fitted = fitName(name, bytes('.result.json'));
    expect(bytes(fitted) + bytes('.result.json') + 6).toBeLessThanOrEqual(255);
    expect(fitted).toMatch(/^a+~[0-9a-f]{8}\.pdf$/);
  });

  it('cuts multi-byte names on a character boundary and tells two long names apart', () => {
    const a = fitName(`${'é'.repeat(120)}😀${'x'.repeat(20)}.pdf`, 12);
    const b = fitName(`${'é'.repeat(120)}😀${'y'.repeat(20)}.pdf`, 12);
    expect(a).not.toBe(b);
    expect(a).not.toContain('\ufffd');
    expect(Buffer.from(a, 'utf8').toString('utf8')).toBe(a);
  });
});

describe('placeFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-place-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('places a file with a 250-byte name and its result record, under a shortened name', async () => {
    const name = `${'n'.repeat(246)}.pdf`;
    const from = path.join(dir, name);
    writeFileSync(from, '%PDF-1.4');
    const placed = await placeFile(from, path.join(dir, 'archive'), name, [
      { suffix: '.result.json', content: '{}' },
    ]);
    const listed = readdirSync(path.join(dir, 'archive')).sort();
    expect(listed).toEqual([path.basename(placed), `${path.basename(placed)}.result.json`].sort());
  });

  it('makes the target folder when it is missing, and again after it was removed, moving markers along', async () => {
    const archive = path.join(dir, 'archive', '2026-11-25');
    for (const name of ['a.pdf', 'b.pdf']) {
      const from = path.join(dir, name);
      writeFileSync(from, '%PDF-1.4');
      writeFileSync(`${from}.done`, '');
      const placed = await placeFile(from, archive, name, [{ suffix: '.result.json', content: '{}' }], {
        markerSuffixes: ['.done'],
      });
      expect(placed).toBe(path.join(archive, name));
      expect(readdirSync(archive).sort()).toEqual([name, `${name}.done`, `${name}.result.json`]);
      rmSync(path.join(dir, 'archive'), { recursive: true });
    }
  });

  it('gives files of one name placed at the same moment each their own name, never replacing one', async () => {
    // Every index.csv of an index-csv folder has the same name; rows of several batches finish together.
    const archive = path.join(dir, 'archive');
    const count = 12;
    const sources = Array.from({ length: count }, (_, i) => {
      const processing = path.join(dir, `processing-${i}`);
      mkdirSync(processing);
      const from = path.join(processing, 'index.csv');
      writeFileSync(from, `batch ${i}\n`);
      return from;
    });
    const placed = await Promise.all(
      sources.map((from, i) =>
        placeFile(from, archive, 'index.csv', [{ suffix: '.result.json', content: `{"batch":${i}}` }]),
      ),
    );
    expect(new Set(placed).size).toBe(count);
    placed.forEach((target, i) => {
      expect(readFileSync(target, 'utf8')).toBe(`batch ${i}\n`);
      expect(readFileSync(`${target}.result.json`, 'utf8')).toBe(`{"batch":${i}}`);
    });
    expect(readdirSync(archive).filter((n) => !n.endsWith('.result.json'))).toHaveLength(count);
    expect(readdirSync(archive).filter((n) => n.startsWith('.'))).toEqual([]);
  });
});
