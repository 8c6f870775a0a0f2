/**
 * Every parse of a dropped file runs in the inspector's workers (issue 16, finding 1): a file that
 * needs more memory or time than allowed is refused with DOCEX_INPUT_TOO_COMPLEX naming the
 * limit, and the next file is inspected as usual.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Inspector } from '../../../src/pipeline/isolate/inspector.js';
import { pageTreeBombPdf, validPdf } from '../../fixtures/inputs/hostile.js';

const inspectors: Inspector[] = [];
function inspector(limits: ConstructorParameters<typeof Inspector>[0] = {}): Inspector {
  const i = new Inspector(limits);
  inspectors.push(i);
  return i;
}
afterAll(async () => {
  await Promise.all(inspectors.map((i) => i.close()));
});

const inspectBytes = (i: Inspector, fileName: string, bytes: Buffer, inputSourceType = 'PDF') =>
  i.run('inspectFile', fileName, {
    path: `/nonexistent/${fileName}`,
    fileName,
    inputSourceType,
    maxBytes: 1 << 30,
    bytes,
  });

describe('Inspector', () => {
  it('refuses the 6.7 KB PDF whose page tree has 2^64 paths, in its first pass over the tree', async () => {
    const bomb = pageTreeBombPdf(64);
    expect(bomb.length).toBeLessThan(8 * 1024);
    const res = await inspectBytes(inspector(), 'tree.pdf', bomb);
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(!res.ok && res.reason).toMatch(
      /^"tree\.pdf" has no readable page tree: its page tree lists object \d+ 0 R more than once\.$/,
    );
  });

  it('refuses a CSV whose parse needs more than inspection.memory, then inspects the next file', async () => {
    const i = inspector({ memory: 32 * 1024 ** 2, workers: 1 });
    const rows = Buffer.from(`a,b\n${'1,2\n'.repeat(3_000_000)}`);
    const res = await inspectBytes(i, 'rows.csv', rows, 'DATA_FILE');
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason:
        '"rows.csv" needed more than 32 MiB of memory to check (inspection.memory); it is too complex to inspect safely.',
      details: { limit: 'memory', memoryBytes: 32 * 1024 ** 2 },
    });
    expect(await inspectBytes(i, 'ok.pdf', await validPdf())).toMatchObject({ ok: true, kind: 'pdf' });
  });

  it('refuses a file whose check outlasts inspection.timeLimit', async () => {
    // A 400-page PDF parses in well over a millisecond.
    const i = inspector({ timeLimit: 1, workers: 1 });
    const res = await inspectBytes(i, 'slow.pdf', await validPdf(400));
    expect(res).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      details: { limit: 'time', timeLimitMs: 1 },
    });
    expect(!res.ok && res.reason).toBe(
      '"slow.pdf" could not be checked in 0.001 s (inspection.timeLimit); it is too complex to inspect safely.',
    );
  });
});
