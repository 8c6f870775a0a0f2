import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  deterministicJobName,
  folderTag,
  jobNameMatches,
  MAX_JOB_NAME_LENGTH,
  parseJobName,
  safeStem,
} from '../../src/journal/job-name.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const SHA = sha('invoice bytes');
const SAFE = /^[A-Za-z0-9._-]+$/;

describe('deterministicJobName', () => {
  it('is readable and stable: file name first, then the SHA-256 prefix and folder tag', () => {
    const input = { folder: 'invoices', fileName: 'invoice-2026-0001.pdf', sha256: SHA };
    const name = deterministicJobName(input);
    expect(name).toBe(`invoice-2026-0001.pdf.dx-${SHA.slice(0, 12)}-${folderTag('invoices')}`);
    expect(deterministicJobName({ ...input })).toBe(name);
  });

  it('carries the row index and, from the second attempt on, the attempt', () => {
    const input = { folder: 'letters', fileName: 'batch.csv', sha256: SHA };
    expect(deterministicJobName({ ...input, rowIndex: 12 })).toMatch(/-r12$/);
    expect(deterministicJobName({ ...input, rowIndex: 0, attempt: 3 })).toMatch(/-r0-a3$/);
    expect(deterministicJobName({ ...input, attempt: 1 })).toBe(deterministicJobName(input));
  });

  it('differs across folders, rows, attempts and content', () => {
    const names = new Set<string>();
    for (const folder of ['a', 'b', '/srv/erp/a', '/srv/erp/b']) {
      for (const rowIndex of [undefined, 0, 1, 10]) {
        for (const attempt of [1, 2]) {
          for (const content of ['x', 'y']) {
            names.add(
              deterministicJobName({ folder, fileName: 'same.csv', sha256: sha(content), rowIndex, attempt }),
            );
          }
        }
      }
    }
    expect(names.size).toBe(4 * 4 * 2 * 2);
  });

  it('keeps only safe characters and drops accents', () => {
    const name = deterministicJobName({
      folder: 'f',
      fileName: 'Facture Été n°12 (copie)/ä?.pdf',
      sha256: SHA,
    });
    expect(name).toMatch(SAFE);
    expect(name.startsWith('Facture-Ete-n-12-copie-a.pdf.dx-')).toBe(true);
    expect(safeStem('///')).toBe('file');
    expect(safeStem('..hidden..')).toBe('hidden');
  });

  it('stays within the length limit and keeps the whole tag when the file name is long', () => {
    const fileName = `${'very-long-name-'.repeat(20)}.pdf`;
    const name = deterministicJobName({
      folder: 'f',
      fileName,
      sha256: SHA,
      rowIndex: 999_999_999,
      attempt: 999_999,
    });
    expect(name.length).toBeLessThanOrEqual(MAX_JOB_NAME_LENGTH);
    expect(name).toMatch(SAFE);
    expect(parseJobName(name)).toMatchObject({
      sha12: SHA.slice(0, 12),
      rowIndex: 999_999_999,
      attempt: 999_999,
    });
  });

  it('refuses input it cannot name safely', () => {
    expect(() => deterministicJobName({ folder: 'f', fileName: 'a', sha256: 'not-hex' })).toThrow(RangeError);
    expect(() => deterministicJobName({ folder: 'f', fileName: 'a', sha256: SHA, rowIndex: -1 })).toThrow(
      RangeError,
    );
    expect(() => deterministicJobName({ folder: 'f', fileName: 'a', sha256: SHA, attempt: 0 })).toThrow(
      RangeError,
    );
  });
});

describe('parseJobName', () => {
  it('reads back every part of a name it made', () => {
    const name = deterministicJobName({
      folder: 'x',
      fileName: 'rows.dx-file.csv',
      sha256: SHA,
      rowIndex: 4,
      attempt: 2,
    });
    expect(parseJobName(name)).toEqual({
      stem: 'rows.dx-file.csv',
      sha12: SHA.slice(0, 12),
      folderTag: folderTag('x'),
      rowIndex: 4,
      attempt: 2,
    });
  });

  it('answers undefined for names it did not make', () => {
    for (const name of [
      'invoice.pdf',
      '',
      `.dx-${SHA.slice(0, 12)}-abcdef`,
      `a b.dx-${SHA.slice(0, 12)}-abcdef`,
    ]) {
      expect(parseJobName(name)).toBeUndefined();
    }
    expect(parseJobName(`${'a'.repeat(MAX_JOB_NAME_LENGTH)}.dx-${SHA.slice(0, 12)}-abcdef`)).toBeUndefined();
  });

  it('jobNameMatches: same file and row at any attempt, not another folder or row', () => {
    const input = { folder: 'x', fileName: 'a.csv', sha256: SHA, rowIndex: 1 };
    expect(jobNameMatches(deterministicJobName({ ...input, attempt: 5 }), input)).toBe(true);
    expect(jobNameMatches(deterministicJobName(input), { ...input, folder: 'y' })).toBe(false);
    expect(jobNameMatches(deterministicJobName(input), { ...input, rowIndex: 2 })).toBe(false);
    expect(jobNameMatches(deterministicJobName(input), { ...input, rowIndex: undefined })).toBe(false);
  });
});
