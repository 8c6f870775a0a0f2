import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import type { Journal } from '../../src/journal/journal.js';
import { claimInput, type JournalHarness, journalHarness } from './support/journal-harness.js';

let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

function finish(id: number) {
  journal.transition(id, 'validated');
  journal.transition(id, 'creating');
  journal.transition(id, 'created', {
    jobId: `job-${id}`,
    uploadUrl: 'https://x/u?s=1',
    uploadDeadline: 1e15,
  });
  journal.transition(id, 'uploaded', { md5: 'm' });
  journal.transition(id, 'done');
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isDocexError(err) ? err.code : 'not a DocexError';
  }
  return undefined;
}

describe('duplicate detection', () => {
  it('the same content dropped again in the same folder is a duplicate naming the earlier item and job', () => {
    const first = journal.recordClaim(claimInput());
    finish(first.item.id);
    const copy = { sourcePath: '/srv/erp/in/copy.pdf', fileName: 'copy.pdf', sha256: first.item.sha256 };
    const again = journal.recordClaim(claimInput(copy));
    expect(again.kind).toBe('duplicate');
    if (again.kind !== 'duplicate') return;
    expect(again.earlier).toMatchObject({ id: first.item.id, state: 'done', jobId: `job-${first.item.id}` });
    expect(again.item).toMatchObject({
      state: 'rejected',
      rejectCode: 'DOCEX_DUPLICATE',
      duplicateOf: first.item.id,
    });
    expect(again.item.rejectReason).toContain('invoice-2026-0001.pdf');
    expect(again.item.rejectReason).toContain(`job-${first.item.id}`);
    expect(again.item.rejectReason).toContain('allowDuplicates');
  });

  it('the same content for the same workflow from another folder is a duplicate too', () => {
    journal.recordClaim(claimInput());
    const other = journal.recordClaim(claimInput({ folder: 'invoices-2', sourcePath: '/srv/other/a.pdf' }));
    expect(other.kind).toBe('duplicate');
  });

  it('the same content for another folder and workflow is not a duplicate', () => {
    journal.recordClaim(claimInput());
    const other = journal.recordClaim(
      claimInput({ folder: 'letters', workflowId: 'wf-print', sourcePath: '/srv/l/a.pdf' }),
    );
    expect(other.kind).toBe('claimed');
  });

  it('a folder that allows duplicates claims the same content again', () => {
    const first = journal.recordClaim(claimInput());
    finish(first.item.id);
    const again = journal.recordClaim(claimInput({ allowDuplicates: true }));
    expect(again.kind).toBe('claimed');
    expect(again.item.allowDuplicates).toBe(true);
  });

  it('content whose earlier drop was rejected can be claimed again (the fix may be in the configuration)', () => {
    const first = journal.recordClaim(claimInput());
    journal.transition(first.item.id, 'rejected', { code: 'DOCEX_API_400', reason: 'workflow not enabled' });
    expect(journal.recordClaim(claimInput()).kind).toBe('claimed');
  });

  it('the very same file seen again while unfinished is in progress, not a new item', () => {
    const first = journal.recordClaim(claimInput());
    const again = journal.recordClaim(claimInput());
    expect(again).toEqual({ kind: 'in-progress', item: first.item });
    expect(journal.stats().files.claimed).toBe(1);
    expect(journal.stats().files.rejected).toBe(0);
  });

  it('the same path and content after the claim was validated is a new drop, so a duplicate', () => {
    const first = journal.recordClaim(claimInput());
    journal.transition(first.item.id, 'validated');
    const again = journal.recordClaim(claimInput());
    expect(again.kind).toBe('duplicate');
    expect(again.kind === 'duplicate' && again.earlier.id).toBe(first.item.id);
  });
});

describe('payload rows', () => {
  function validatedPayloadFile() {
    const { item } = journal.recordClaim(claimInput({ fileName: 'letters.csv', mode: 'payload-pdf' }));
    journal.transition(item.id, 'validated');
    return item;
  }

  it('rows inherit the file, start validated (or rejected by the local rules) and get row job names', () => {
    const file = validatedPayloadFile();
    const rows = journal.addRows(file.id, [
      { rowIndex: 0, label: 'INV-1', payloadSha256: 'p0' },
      { rowIndex: 1, rejected: { code: 'DOCEX_PAYLOAD_RULE', reason: 'ADDRESS on a print workflow' } },
    ]);
    expect(rows[0]).toMatchObject({
      kind: 'row',
      parentId: file.id,
      rowIndex: 0,
      state: 'validated',
      label: 'INV-1',
      sha256: file.sha256,
      folder: file.folder,
      workflowId: file.workflowId,
      mode: 'payload-pdf',
    });
    expect(rows[1]).toMatchObject({ state: 'rejected', rejectCode: 'DOCEX_PAYLOAD_RULE' });
    expect(journal.transition(rows[0]!.id, 'creating').jobName).toMatch(/-r0$/);
  });

  it('refuses rows twice, rows on an unvalidated file, and an empty row list', () => {
    const { item } = journal.recordClaim(claimInput({ fileName: 'x.csv', mode: 'payload-word' }));
    expect(codeOf(() => journal.addRows(item.id, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_ROWS');
    journal.transition(item.id, 'validated');
    expect(codeOf(() => journal.addRows(item.id, []))).toBe('DOCEX_JOURNAL_ROWS');
    journal.addRows(item.id, [{ rowIndex: 0 }]);
    expect(codeOf(() => journal.addRows(item.id, [{ rowIndex: 1 }]))).toBe('DOCEX_JOURNAL_ROWS');
    expect(journal.rowsOf(item.id)).toHaveLength(1);
  });

  it('adds all rows or none', () => {
    const file = validatedPayloadFile();
    expect(() => journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 0 }])).toThrow();
    expect(journal.rowsOf(file.id)).toEqual([]);
  });

  it('the file is done only after every row is final', () => {
    const file = validatedPayloadFile();
    const [row] = journal.addRows(file.id, [{ rowIndex: 0 }]);
    expect(codeOf(() => journal.transition(file.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(codeOf(() => journal.transition(file.id, 'creating'))).toBe('DOCEX_JOURNAL_TRANSITION');
    journal.transition(row!.id, 'creating');
    journal.transition(row!.id, 'created', {
      jobId: 'job-r0',
      uploadUrl: 'https://x/u?s=1',
      uploadDeadline: 1e15,
    });
    expect(codeOf(() => journal.transition(row!.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
    journal.transition(row!.id, 'uploaded', { md5: 'm' });
    journal.transition(row!.id, 'done');
    expect(journal.transition(file.id, 'done').state).toBe('done');
  });

  it('a payload-word row needs no upload: created then done', () => {
    const { item } = journal.recordClaim(claimInput({ fileName: 'w.json', mode: 'payload-word' }));
    journal.transition(item.id, 'validated');
    const [row] = journal.addRows(item.id, [{ rowIndex: 0 }]);
    journal.transition(row!.id, 'creating');
    expect(journal.transition(row!.id, 'created', { jobId: 'job-w' }).hasUploadUrl).toBe(false);
    expect(codeOf(() => journal.transition(row!.id, 'uploaded', { md5: 'm' }))).toBe(
      'DOCEX_JOURNAL_TRANSITION',
    );
    expect(journal.transition(row!.id, 'done').state).toBe('done');
  });
});
