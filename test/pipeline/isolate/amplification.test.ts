/**
 * Small files that expand (issue 16, findings 4 and 5): each limit of inspection.limits refuses
 * its file with DOCEX_INPUT_TOO_COMPLEX naming the limit, in the inspector's worker (so the
 * configured limits reach it), and the ZIP bomb cut into small entries is a bomb still.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Inspector } from '../../../src/pipeline/isolate/inspector.js';
import { planColumns } from '../../../src/pipeline/payload/columns.js';
import {
  endlessXrefPdf,
  handXrefStreamPdf,
  makeZip,
  ONE_PAGE_OBJECTS,
  objectStreamBombPdf,
  validPdf,
} from '../../fixtures/inputs/hostile.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-amp-'));
const inspector = new Inspector({
  workers: 1,
  limits: {
    pdfInflate: 1024 ** 2,
    csvColumns: 100,
    csvLineBytes: 1024,
    xmlElements: 1000,
    xmlAttributes: 500,
  },
});
afterAll(async () => {
  await inspector.close();
  rmSync(dir, { recursive: true, force: true });
});

function inspect(fileName: string, bytes: Buffer | string, inputSourceType: string) {
  const data = Buffer.from(bytes);
  const filePath = path.join(dir, fileName);
  writeFileSync(filePath, data);
  return inspector.run('inspectFile', fileName, {
    path: filePath,
    fileName,
    inputSourceType,
    maxBytes: 1 << 30,
  });
}

describe('expansion limits', () => {
  it('refuses a PDF whose object stream inflates over inspection.limits.pdfInflate', async () => {
    const res = await inspect('bomb.pdf', objectStreamBombPdf(8 * 1024 ** 2), 'PDF');
    expect(res).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason: '"bomb.pdf" has streams that inflate over the limit of 1 MiB (inspection.limits.pdfInflate).',
      details: { limit: 'pdfInflate', pdfInflate: 1024 ** 2 },
    });
    expect(await inspect('fine.pdf', objectStreamBombPdf(64 * 1024), 'PDF')).toMatchObject({ ok: true });
  });

  it('refuses as corrupt, before pdf-lib builds its entries, a small PDF whose cross-reference stream lists 2^31 objects in no bytes', async () => {
    expect(await inspect('endless-xref.pdf', endlessXrefPdf(), 'PDF')).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_PDF_CORRUPT',
      reason:
        '"endless-xref.pdf" is not a readable PDF: its cross-reference stream lists 2147483647 objects in 0 bytes.',
    });
    // Its worker did not run out of memory: it is still the one that answers the next file.
    expect(inspector.workers).toBe(1);
    expect(await inspect('xref-stream.pdf', handXrefStreamPdf([...ONE_PAGE_OBJECTS]), 'PDF')).toMatchObject({
      ok: true,
    });
  });

  it('refuses a ZIP bomb cut into entries too small for the per-entry ratio check', async () => {
    const small = 60 * 1024;
    const zip = makeZip(
      Array.from({ length: 40 }, (_, i) => ({ name: `part-${i}.pdf`, data: Buffer.alloc(small) })),
    );
    const res = await inspect('split.zip', zip, 'PDF');
    expect(res).toMatchObject({ ok: false, code: 'DOCEX_INPUT_ZIP_BOMB' });
    expect(!res.ok && res.reason).toMatch(/however the entries are cut/);
  });

  it('still takes a ZIP of ordinary PDFs', async () => {
    const zip = makeZip([
      { name: 'a.pdf', data: await validPdf(2) },
      { name: 'b.pdf', data: await validPdf(1) },
    ]);
    expect(await inspect('two.zip', zip, 'PDF')).toMatchObject({ ok: true, kind: 'zip' });
  });

  it('refuses XML with more elements or attributes than inspection.limits allows', async () => {
    const elements = `<r>${'<c>1</c>'.repeat(1000)}</r>`;
    expect(await inspect('elements.xml', elements, 'DATA_FILE')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason:
        '"elements.xml" has a number of elements over the limit of 1,000 (inspection.limits.xmlElements).',
    });
    const attributes = `<r>${'<c a="1" b=\'2\'/>'.repeat(251)}</r>`;
    expect(await inspect('attributes.xml', attributes, 'DATA_FILE')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      details: { limit: 'xmlAttributes' },
    });
    const fine = `<r><!-- <x a="1"> --><![CDATA[<y b="2">]]>${'<c a="1"/>'.repeat(400)}</r>`;
    expect(await inspect('fine.xml', fine, 'DATA_FILE')).toMatchObject({ ok: true });
  });

  it('refuses a CSV with more columns, or a longer line, than inspection.limits allows', async () => {
    const wide = `${Array.from({ length: 101 }, (_, i) => `c${i}`).join(',')}\n${'1,'.repeat(100)}1\n`;
    expect(await inspect('wide.csv', wide, 'DATA_FILE')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      details: { limit: 'csvColumns', csvColumns: 100 },
    });
    const long = `a,b\n1,${'x'.repeat(2000)}\n`;
    expect(await inspect('long.csv', long, 'DATA_FILE')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason: '"long.csv" has a line over the limit of 0.0 MiB (inspection.limits.csvLineBytes).',
    });
  });

  it('plans a header of 120,000 data columns in one pass, still finding a value that is also an object', () => {
    const header = Array.from({ length: 120_000 }, (_, i) => `data.group${i % 1000}.field${i}`);
    expect(planColumns(header, { fileName: 'wide.csv' })).toMatchObject({ ok: true });
    expect(planColumns([...header, 'data.group7'], { fileName: 'wide.csv' })).toMatchObject({
      ok: false,
      reason: '"wide.csv": data.group7 is both a value and an object.',
    });
  });
});
