import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { reject } from '../../src/pipeline/inspect/codes.js';
import type { Inspection } from '../../src/pipeline/inspect/inspect-file.js';
import { VERDICT_MAX_AGE_MS, VerdictCache, type VerdictInputs } from '../../src/pipeline/verdicts.js';

const inputs = (over: Partial<VerdictInputs> = {}): VerdictInputs => ({
  sha256: 'a'.repeat(64),
  fileName: 'x.pdf',
  inputSourceType: 'PDF',
  maxBytes: 1024,
  allowHardLinks: false,
  regularFile: true,
  links: 1,
  limits: '{}',
  ...over,
});
const corrupt = reject('DOCEX_INPUT_PDF_CORRUPT', '"x.pdf" is not a readable PDF: no header.');
const accepted: Inspection = { ok: true, kind: 'pdf', size: 10, details: { pages: 1 } };

describe('VerdictCache', () => {
  it('finds a verdict by content and settings, whatever the name, for a name of the same extension', () => {
    const cache = new VerdictCache();
    cache.set(inputs(), corrupt);
    expect(cache.get(inputs({ fileName: 'y.PDF' }))).toMatchObject({
      code: 'DOCEX_INPUT_PDF_CORRUPT',
      reason: '"y.PDF" is not a readable PDF: no header.',
    });
    expect(cache.get(inputs({ fileName: 'x.zip' }))).toBeUndefined();
    expect(cache.get(inputs({ fileName: 'x\u202Efdp.pdf' }))).toBeUndefined();
  });

  it('finds nothing for other content, limits, settings or another kind of path', () => {
    const cache = new VerdictCache();
    cache.set(inputs(), accepted);
    expect(cache.get(inputs())).toEqual(accepted);
    for (const other of [
      { sha256: 'b'.repeat(64) },
      { limits: '{"timeLimit":1}' },
      { inputSourceType: 'PAYLOAD_PDF' },
      { maxBytes: 2048 },
      { allowHardLinks: true },
      { regularFile: false },
      { links: 2 },
    ]) {
      expect(cache.get(inputs(other))).toBeUndefined();
    }
  });

  it('keeps no verdict a file still being written or chmod-ed may give', () => {
    const cache = new VerdictCache();
    cache.set(inputs(), reject('DOCEX_INPUT_EMPTY', '"x.pdf" is empty (0 bytes).'));
    cache.set(
      inputs({ sha256: 'c'.repeat(64) }),
      reject('DOCEX_INPUT_UNREADABLE', '"x.pdf" could not be read.'),
    );
    expect(cache.size).toBe(0);
  });

  it('keeps no verdict of a worker that died or ran out of memory, and keeps one of the time limit', () => {
    const cache = new VerdictCache();
    const hit = (limit: string) => reject('DOCEX_INPUT_TOO_COMPLEX', '"x.pdf" is too complex.', { limit });
    cache.set(inputs({ sha256: '1' }), hit('crash'));
    cache.set(inputs({ sha256: '2' }), hit('memory'));
    cache.set(inputs({ sha256: '3' }), hit('time'));
    expect(cache.get(inputs({ sha256: '1' }))).toBeUndefined();
    expect(cache.get(inputs({ sha256: '2' }))).toBeUndefined();
    expect(cache.get(inputs({ sha256: '3' }))).toMatchObject({ code: 'DOCEX_INPUT_TOO_COMPLEX' });
  });

  it('reuses a verdict for ten minutes, then checks the bytes again', () => {
    const clock = new ManualClock();
    const cache = new VerdictCache({ clock });
    cache.set(inputs(), corrupt);
    clock.advance(VERDICT_MAX_AGE_MS);
    expect(cache.get(inputs())).toBeDefined();
    clock.advance(1);
    expect(cache.get(inputs())).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the least recently used verdict past its number of entries or their total length', () => {
    const cache = new VerdictCache({ maxEntries: 2, maxLength: 10_000 });
    cache.set(inputs({ sha256: '1' }), corrupt);
    cache.set(inputs({ sha256: '2' }), corrupt);
    cache.get(inputs({ sha256: '1' }));
    cache.set(inputs({ sha256: '3' }), corrupt);
    expect(cache.get(inputs({ sha256: '2' }))).toBeUndefined();
    expect(cache.get(inputs({ sha256: '1' }))).toBeDefined();
    expect(cache.get(inputs({ sha256: '3' }))).toBeDefined();

    const small = new VerdictCache({ maxEntries: 100, maxLength: JSON.stringify(corrupt).length * 2 });
    for (const sha of ['1', '2', '3']) small.set(inputs({ sha256: sha }), corrupt);
    expect(small.size).toBe(2);
    expect(small.get(inputs({ sha256: '1' }))).toBeUndefined();
  });
});
