/**
 * The structural check of a PDF too large to parse whole (issue 29): each file is checked as if
 * over the parse limit (parseMaxBytes 1), so what is read is its end, its cross-reference and the
 * objects they lead to.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectPdfFile } from '../../../src/pipeline/inspect/pdf.js';
import {
  ENCRYPT_DICTIONARY,
  encryptedPdf,
  endlessXrefPdf,
  garbagePdf,
  handPdf,
  handXrefStreamPdf,
  noPagePdf,
  ONE_PAGE_OBJECTS,
  onePageHandPdf,
  updatedPdf,
  validPdf,
} from '../../fixtures/inputs/hostile.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docex-pdf-structure-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function checkLarge(bytes: Buffer) {
  const p = path.join(dir, `${++n}.pdf`);
  writeFileSync(p, bytes);
  return inspectPdfFile(p, 'big.pdf', bytes.length, 1);
}

const ENCRYPT_DICT = ENCRYPT_DICTIONARY;

describe('a PDF over the parse limit, by its structure', () => {
  it.each([
    ['a pdf-lib PDF (object streams, a cross-reference stream)', () => validPdf(3)],
    [
      'a pdf-lib PDF with a cross-reference table',
      async () => {
        const doc = await PDFDocument.load(await validPdf(2));
        return Buffer.from(await doc.save({ useObjectStreams: false }));
      },
    ],
    ['a hand-written PDF with a cross-reference table', async () => onePageHandPdf()],
    ['a cross-reference stream', async () => handXrefStreamPdf([...ONE_PAGE_OBJECTS])],
    [
      'a deflated cross-reference stream under the PNG Up predictor',
      async () => handXrefStreamPdf([...ONE_PAGE_OBJECTS], '', true),
    ],
    ['an incremental update (/Prev)', async () => updatedPdf(onePageHandPdf(), '<< /Producer (update) >>')],
    [
      'junk before %PDF- that its offsets do not count',
      async () => Buffer.concat([Buffer.from('X-Spool: 42\r\n'), handXrefStreamPdf([...ONE_PAGE_OBJECTS])]),
    ],
  ])('accepts %s', async (_, make) => {
    expect(await checkLarge(await make())).toEqual({ ok: true, details: { parsed: false } });
  });

  it.each([
    [
      '%PDF-, noise and %%EOF',
      () => garbagePdf(),
      'DOCEX_INPUT_PDF_CORRUPT',
      'it has no startxref at its end',
    ],
    [
      'a startxref past the end of the file',
      () =>
        Buffer.from(
          onePageHandPdf()
            .toString('latin1')
            .replace(/startxref\n\d+/, 'startxref\n99999999'),
          'latin1',
        ),
      'DOCEX_INPUT_PDF_CORRUPT',
      'startxref points outside the file',
    ],
    [
      'a catalog away from the offset its cross-reference gives',
      () => Buffer.from(onePageHandPdf().toString('latin1').replace('1 0 obj', '7 0 obj'), 'latin1'),
      'DOCEX_INPUT_PDF_CORRUPT',
      'object 1 is not at the offset its cross-reference gives',
    ],
    [
      'a catalog without a page tree',
      () => handPdf(['<< /Type /Catalog >>']),
      'DOCEX_INPUT_PDF_CORRUPT',
      'its catalog does not lead to a list of pages',
    ],
    ['an encrypted PDF', () => encryptedPdf(), 'DOCEX_INPUT_PDF_ENCRYPTED', 'encrypted'],
    [
      'an encrypted PDF whose trailer writes /Encrypt with #-escapes',
      () => handPdf([...ONE_PAGE_OBJECTS, ENCRYPT_DICT], '/Encr#79pt 4 0 R'),
      'DOCEX_INPUT_PDF_ENCRYPTED',
      'encrypted',
    ],
    [
      'an encrypted PDF whose cross-reference stream dictionary writes /Encrypt with #-escapes',
      () => handXrefStreamPdf([...ONE_PAGE_OBJECTS, ENCRYPT_DICT], '/#45ncrypt 4 0 R'),
      'DOCEX_INPUT_PDF_ENCRYPTED',
      'encrypted',
    ],
    [
      'an encryption added by an incremental update',
      () => updatedPdf(onePageHandPdf(), ENCRYPT_DICT, '/Encr#79pt 4 0 R'),
      'DOCEX_INPUT_PDF_ENCRYPTED',
      'encrypted',
    ],
  ])('refuses %s', async (_, make, code, why) => {
    const res = await checkLarge(make());
    expect(res).toMatchObject({ ok: false, code, details: { parsed: false } });
    expect(!res.ok && res.reason).toContain(why);
  });

  it('refuses a cross-reference stream over inspection.limits.pdfInflate, and one of 2^31 entries in no bytes', async () => {
    const bomb = deflateSync(Buffer.alloc(65 * 1024 * 1024));
    const inflating = Buffer.concat([
      Buffer.from(
        `%PDF-1.5\n1 0 obj\n<< /Type /XRef /Size 2 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`,
      ),
      bomb,
      Buffer.from('\nendstream\nendobj\nstartxref\n9\n%%EOF\n'),
    ]);
    expect(await checkLarge(inflating)).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason: expect.stringContaining('inspection.limits.pdfInflate'),
    });
    expect(await checkLarge(endlessXrefPdf())).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_CORRUPT' });
  });

  it('refuses a PDF whose page tree root counts no pages as empty', async () => {
    expect(await checkLarge(await noPagePdf())).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_EMPTY' });
  });
});

describe('a mutated large PDF', () => {
  const CODES = [
    'DOCEX_INPUT_PDF_CORRUPT',
    'DOCEX_INPUT_PDF_ENCRYPTED',
    'DOCEX_INPUT_PDF_EMPTY',
    'DOCEX_INPUT_PDF_TRUNCATED',
    'DOCEX_INPUT_TOO_COMPLEX',
  ];
  const TOKENS = [
    '<<',
    '>>',
    '[',
    ']',
    '(',
    ')',
    ' 0 R',
    '/Encr#79pt',
    '#',
    'stream\n',
    'xref',
    'trailer',
    'startxref\n',
    '/Prev 0',
    '/W [9 9 9]',
    ' 99999999999 ',
    '%',
    '\n',
  ];
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), back: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ kind: fc.constant('token' as const), back: fc.nat(), token: fc.constantFrom(...TOKENS) }),
    fc.record({
      kind: fc.constant('delete' as const),
      back: fc.nat(),
      length: fc.integer({ min: 1, max: 32 }),
    }),
  );
  type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;
  /** Mutations land in the last 600 bytes, where the cross-reference and trailer are. */
  function mutate(bytes: Buffer, steps: Mutation[]): Buffer {
    let out = Buffer.from(bytes);
    for (const m of steps) {
      const at = out.length - 1 - (m.back % Math.min(out.length, 600));
      if (m.kind === 'flip') out[at] = (out[at] ?? 0) ^ (1 << m.bit);
      else if (m.kind === 'token')
        out = Buffer.concat([out.subarray(0, at), Buffer.from(m.token), out.subarray(at)]);
      else out = Buffer.concat([out.subarray(0, at), out.subarray(at + m.length)]);
    }
    return out;
  }

  it('is accepted or refused with a PDF code, never an error', { timeout: 120_000 }, async () => {
    const doc = await PDFDocument.load(await validPdf(2));
    const seeds = [
      await validPdf(2),
      Buffer.from(await doc.save({ useObjectStreams: false })),
      handXrefStreamPdf([...ONE_PAGE_OBJECTS], '', true),
      updatedPdf(onePageHandPdf(), '<< /Producer (update) >>'),
    ];
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), async (pick, steps) => {
        const res = await checkLarge(mutate(seeds[pick % seeds.length] as Buffer, steps));
        if (!res.ok) expect(CODES).toContain(res.code);
      }),
      { seed: 29_002, numRuns: 400 },
    );
  });
});
