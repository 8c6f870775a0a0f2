/**
 * Conformance: claims (duplicates of earlier content, the very same file seen again while
 * unfinished) and payload rows. Every backend (support/backends.ts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, sha256 } from '../support/journal-harness.js';
import { codeOf, toDone } from '../support/steps.js';

describeEachBackend('journal claims', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  describe('duplicate detection', () => {
    it('the same content dropped again in the same folder is a duplicate naming the earlier item and job', async () => {
      const first = await journal.recordClaim(claimInput());
      await toDone(journal, first.item.id);
      const copy = { sourcePath: '/srv/erp/in/copy.pdf', fileName: 'copy.pdf', sha256: first.item.sha256 };
      t.clock.advance(5000);
      const again = await journal.recordClaim(claimInput(copy));
      expect(again.kind).toBe('duplicate');
      if (again.kind !== 'duplicate') return;
      expect(again.earlier).toMatchObject({
        id: first.item.id,
        state: 'done',
        jobId: `job-${first.item.id}`,
      });
      expect(again.item).toMatchObject({
        state: 'rejected',
        fileName: 'copy.pdf',
        sourcePath: '/srv/erp/in/copy.pdf',
        rejectCode: 'DOCEX_DUPLICATE',
        duplicateOf: first.item.id,
        createdAt: t.clock.now(),
      });
      expect(again.item.id).not.toBe(first.item.id);
      expect(again.item.rejectReason).toContain('invoice-2026-0001.pdf');
      expect(again.item.rejectReason).toContain(`job-${first.item.id}`);
      expect(again.item.rejectReason).toContain('allowDuplicates');
      expect(await journal.history(again.item.id)).toEqual([
        {
          itemId: again.item.id,
          from: undefined,
          to: 'rejected',
          at: t.clock.now(),
          detail: { code: 'DOCEX_DUPLICATE', duplicateOf: first.item.id },
        },
      ]);
      expect(await journal.get(again.item.id)).toEqual(again.item);
    });

    it('the same content for the same workflow from another folder is a duplicate too', async () => {
      const first = await journal.recordClaim(claimInput());
      const other = await journal.recordClaim(
        claimInput({ folder: 'invoices-2', sourcePath: '/srv/other/a.pdf' }),
      );
      expect(other.kind).toBe('duplicate');
      expect(other.kind === 'duplicate' && other.earlier.id).toBe(first.item.id);
    });

    it('the same content for another folder and workflow is not a duplicate', async () => {
      await journal.recordClaim(claimInput());
      const other = await journal.recordClaim(
        claimInput({ folder: 'letters', workflowId: 'wf-print', sourcePath: '/srv/l/a.pdf' }),
      );
      expect(other.kind).toBe('claimed');
    });

    it('the same content sent as another managed company is not a duplicate, in the same folder or for the same workflow', async () => {
      const acme = await journal.recordClaim(claimInput({ managedCompanyId: 'cmp_acme' }));
      expect(acme.kind).toBe('claimed');
      const globex = await journal.recordClaim(
        claimInput({ managedCompanyId: 'cmp_globex', sourcePath: '/srv/erp/in/globex.pdf' }),
      );
      expect(globex.kind).toBe('claimed');
      const direct = await journal.recordClaim(
        claimInput({ folder: 'other', managedCompanyId: '', sourcePath: '/srv/other/a.pdf' }),
      );
      expect(direct.kind).toBe('claimed');
      const acmeAgain = await journal.recordClaim(
        claimInput({ folder: 'other', managedCompanyId: 'cmp_acme', sourcePath: '/srv/other/b.pdf' }),
      );
      expect(acmeAgain.kind === 'duplicate' && acmeAgain.earlier.id).toBe(acme.item.id);
    });

    it('a claim or an earlier item without a recorded company is a duplicate of the same content as any company', async () => {
      const old = await journal.recordClaim(claimInput());
      const routed = await journal.recordClaim(
        claimInput({ managedCompanyId: 'cmp_acme', sourcePath: '/srv/erp/in/acme.pdf' }),
      );
      expect(routed.kind === 'duplicate' && routed.earlier.id).toBe(old.item.id);
      const other = sha256('other bytes');
      const acme = await journal.recordClaim(claimInput({ sha256: other, managedCompanyId: 'cmp_acme' }));
      const unknown = await journal.recordClaim(
        claimInput({ sha256: other, sourcePath: '/srv/erp/in/plain.pdf' }),
      );
      expect(unknown.kind === 'duplicate' && unknown.earlier.id).toBe(acme.item.id);
    });

    it('other content in the same folder is not a duplicate', async () => {
      await journal.recordClaim(claimInput());
      const other = await journal.recordClaim(claimInput({ sha256: sha256('other bytes') }));
      expect(other.kind).toBe('claimed');
    });

    it('a folder that allows duplicates claims the same content again', async () => {
      const first = await journal.recordClaim(claimInput());
      await toDone(journal, first.item.id);
      const again = await journal.recordClaim(claimInput({ allowDuplicates: true }));
      expect(again.kind).toBe('claimed');
      expect(again.item.allowDuplicates).toBe(true);
      expect(again.item.id).not.toBe(first.item.id);
    });

    it('content whose earlier drop was rejected can be claimed again (the fix may be in the configuration)', async () => {
      const first = await journal.recordClaim(claimInput());
      await journal.transition(first.item.id, 'rejected', {
        code: 'DOCEX_API_400',
        reason: 'workflow not enabled',
      });
      const again = await journal.recordClaim(claimInput());
      expect(again.kind).toBe('claimed');
      expect(again.item.id).not.toBe(first.item.id);
    });

    it('names the earliest unrejected drop of the content as the earlier one', async () => {
      const a = await journal.recordClaim(claimInput({ allowDuplicates: true }));
      await journal.transition(a.item.id, 'validated');
      const b = await journal.recordClaim(claimInput({ allowDuplicates: true, sourcePath: '/srv/b.pdf' }));
      expect(b.kind).toBe('claimed');
      const c = await journal.recordClaim(claimInput({ sourcePath: '/srv/c.pdf' }));
      expect(c.kind === 'duplicate' && c.earlier.id).toBe(a.item.id);
    });

    it('the very same file seen again while unfinished is in progress, not a new item', async () => {
      const first = await journal.recordClaim(claimInput());
      t.clock.advance(1000);
      const again = await journal.recordClaim(claimInput());
      expect(again).toEqual({ kind: 'in-progress', item: first.item });
      const stats = await journal.stats();
      expect(stats.files.claimed).toBe(1);
      expect(stats.files.rejected).toBe(0);
      expect(await journal.history(first.item.id)).toHaveLength(1);
    });

    it('the same path and content after the claim was validated is a new drop, so a duplicate', async () => {
      const first = await journal.recordClaim(claimInput());
      await journal.transition(first.item.id, 'validated');
      const again = await journal.recordClaim(claimInput());
      expect(again.kind).toBe('duplicate');
      expect(again.kind === 'duplicate' && again.earlier.id).toBe(first.item.id);
    });
  });

  describe('the route decided at the claim', () => {
    const ROUTE = { workflowId: 'wf_credit', managedCompanyId: 'cmp_acme' };

    it('keeps the workflow and managed company recorded at the claim, claimed validated too, and rows inherit them', async () => {
      const plain = await journal.recordClaim(claimInput());
      expect(plain.item.managedCompanyId).toBeUndefined();
      const routed = await journal.recordClaim(
        claimInput({
          sourcePath: '/drop/credit.pdf',
          sha256: sha256('credit'),
          validatedNote: 'pdf',
          ...ROUTE,
        }),
      );
      expect(routed.item).toMatchObject({ state: 'creating', ...ROUTE });
      expect(await journal.get(routed.item.id)).toMatchObject(ROUTE);
      const { item } = await journal.recordClaim(
        claimInput({ fileName: 'rows.csv', sha256: sha256('rows'), mode: 'payload-pdf', ...ROUTE }),
      );
      await journal.transition(item.id, 'validated');
      const [row] = await journal.addRows(item.id, [{ rowIndex: 0, label: 'r0', payloadSha256: 'p0' }]);
      expect(row).toMatchObject({ kind: 'row', ...ROUTE });
    });
  });

  describe('a file refused at its claim', () => {
    it('is recorded rejected with its code and reason in the claim itself, never claimed', async () => {
      const refused = {
        code: 'DOCEX_INPUT_NO_ROUTE' as const,
        reason: '"x.pdf" matches none of the folder\'s routes',
      };
      const result = await journal.recordClaim(
        claimInput({ fileName: 'x.pdf', refused, validatedNote: 'pdf' }),
      );
      expect(result.kind).toBe('claimed');
      expect(result.item).toMatchObject({
        state: 'rejected',
        rejectCode: refused.code,
        rejectReason: refused.reason,
      });
      expect((await journal.history(result.item.id)).map((e) => [e.from, e.to, e.detail])).toEqual([
        [undefined, 'rejected', refused],
      ]);
      expect(await journal.get(result.item.id)).toEqual(result.item);
      // Refused content is no earlier drop: the same file dropped again is judged anew.
      const again = await journal.recordClaim(claimInput({ fileName: 'x.pdf', sourcePath: '/drop/x2.pdf' }));
      expect(again).toMatchObject({ kind: 'claimed', item: { state: 'claimed' } });
    });
  });

  describe('payload rows', () => {
    async function validatedPayloadFile() {
      const { item } = await journal.recordClaim(
        claimInput({ fileName: 'letters.csv', mode: 'payload-pdf' }),
      );
      return journal.transition(item.id, 'validated');
    }

    it('rows inherit the file, start validated (or rejected by the local rules) and get row job names', async () => {
      const file = await validatedPayloadFile();
      t.clock.advance(1000);
      const rows = await journal.addRows(file.id, [
        { rowIndex: 0, label: 'INV-1', payloadSha256: 'p0' },
        {
          rowIndex: 1,
          rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'ADDRESS on a print workflow' },
        },
      ]);
      expect(rows[0]).toMatchObject({
        kind: 'row',
        parentId: file.id,
        rowIndex: 0,
        state: 'validated',
        label: 'INV-1',
        payloadSha256: 'p0',
        sha256: file.sha256,
        fileName: file.fileName,
        folder: file.folder,
        workflowId: file.workflowId,
        mode: 'payload-pdf',
        attempt: 0,
        createdAt: t.clock.now(),
      });
      expect(rows[1]).toMatchObject({
        state: 'rejected',
        rejectCode: 'DOCEX_PAYLOAD_ROW_INVALID',
        rejectReason: 'ADDRESS on a print workflow',
      });
      expect(await journal.rowsOf(file.id)).toEqual(rows);
      expect((await journal.history(rows[0]!.id)).map((e) => [e.from, e.to, e.detail])).toEqual([
        [undefined, 'validated', { rowIndex: 0 }],
      ]);
      expect((await journal.history(rows[1]!.id)).map((e) => [e.from, e.to, e.detail])).toEqual([
        [undefined, 'rejected', { code: 'DOCEX_PAYLOAD_ROW_INVALID' }],
      ]);
      expect((await journal.transition(rows[0]!.id, 'creating')).jobName).toMatch(/-r0$/);
      // The rows' items are not files: the file's state alone is counted as a file.
      expect((await journal.stats()).files.validated).toBe(1);
      expect((await journal.stats()).rows).toMatchObject({ creating: 1, rejected: 1 });
    });

    it('answers the rows in row order, whatever order they came in', async () => {
      const file = await validatedPayloadFile();
      await journal.addRows(file.id, [{ rowIndex: 2 }, { rowIndex: 0 }, { rowIndex: 1 }]);
      expect((await journal.rowsOf(file.id)).map((r) => r.rowIndex)).toEqual([0, 1, 2]);
    });

    it('refuses rows twice, rows on an unvalidated file, rows on a row, an empty row list and a negative index', async () => {
      const { item } = await journal.recordClaim(claimInput({ fileName: 'x.csv', mode: 'payload-word' }));
      expect(await codeOf(journal.addRows(item.id, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_ROWS');
      await journal.transition(item.id, 'validated');
      expect(await codeOf(journal.addRows(item.id, []))).toBe('DOCEX_JOURNAL_ROWS');
      expect(await codeOf(journal.addRows(item.id, [{ rowIndex: -1 }]))).toBe('DOCEX_JOURNAL_ROWS');
      const [row] = await journal.addRows(item.id, [{ rowIndex: 0 }]);
      expect(await codeOf(journal.addRows(item.id, [{ rowIndex: 1 }]))).toBe('DOCEX_JOURNAL_ROWS');
      expect(await codeOf(journal.addRows(row!.id, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_ROWS');
      expect(await codeOf(journal.addRows(9999, [{ rowIndex: 0 }]))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
      expect(await journal.rowsOf(item.id)).toHaveLength(1);
    });

    it('adds all rows or none', async () => {
      const file = await validatedPayloadFile();
      await expect(journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 0 }])).rejects.toThrow();
      await expect(journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: -1 }])).rejects.toThrow();
      expect(await journal.rowsOf(file.id)).toEqual([]);
      expect((await journal.stats()).rows.validated).toBe(0);
      // Nothing half-done stands in the way of the right rows.
      expect(await journal.addRows(file.id, [{ rowIndex: 0 }, { rowIndex: 1 }])).toHaveLength(2);
    });

    it('the file is done only after every row is final', async () => {
      const file = await validatedPayloadFile();
      const [row, refused] = await journal.addRows(file.id, [
        { rowIndex: 0 },
        { rowIndex: 1, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'bad' } },
      ]);
      expect(refused!.state).toBe('rejected');
      expect(await codeOf(journal.transition(file.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
      expect(await codeOf(journal.transition(file.id, 'creating'))).toBe('DOCEX_JOURNAL_TRANSITION');
      await journal.transition(row!.id, 'creating');
      await journal.transition(row!.id, 'created', {
        jobId: 'job-r0',
        uploadUrl: 'https://x/u?s=1',
        uploadDeadline: 1e15,
      });
      expect(await codeOf(journal.transition(row!.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
      expect(await codeOf(journal.transition(file.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
      await journal.transition(row!.id, 'uploaded', { md5: 'm' });
      await journal.transition(row!.id, 'done');
      expect((await journal.transition(file.id, 'done')).state).toBe('done');
    });

    it('a file with rows can be rejected whole while its rows run', async () => {
      const file = await validatedPayloadFile();
      await journal.addRows(file.id, [{ rowIndex: 0 }]);
      expect(
        (await journal.transition(file.id, 'rejected', { code: 'DOCEX_SOURCE_CHANGED', reason: 'changed' }))
          .state,
      ).toBe('rejected');
    });

    it('a payload row is never claimed', async () => {
      const file = await validatedPayloadFile();
      const [row] = await journal.addRows(file.id, [{ rowIndex: 0 }]);
      expect(await codeOf(journal.transition(row!.id, 'claimed'))).toBe('DOCEX_JOURNAL_TRANSITION');
      expect(await codeOf(journal.transition(row!.id, 'validated'))).toBe('DOCEX_JOURNAL_TRANSITION');
    });

    it('a payload-word row needs no upload: created then done', async () => {
      const { item } = await journal.recordClaim(claimInput({ fileName: 'w.json', mode: 'payload-word' }));
      await journal.transition(item.id, 'validated');
      const [row] = await journal.addRows(item.id, [{ rowIndex: 0 }]);
      await journal.transition(row!.id, 'creating');
      const created = await journal.transition(row!.id, 'created', {
        jobId: 'job-w',
        uploadUrl: 'https://ignored/u?s=1',
        uploadDeadline: 1e15,
      });
      expect(created).toMatchObject({ hasUploadUrl: false, uploadDeadline: undefined, jobId: 'job-w' });
      expect(await codeOf(journal.transition(row!.id, 'uploaded', { md5: 'm' }))).toBe(
        'DOCEX_JOURNAL_TRANSITION',
      );
      expect((await journal.transition(row!.id, 'done')).state).toBe('done');
    });

    it('an upload job is done only after its upload is confirmed', async () => {
      const { item } = await journal.recordClaim(claimInput());
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      await journal.transition(item.id, 'created', {
        jobId: 'job-1',
        uploadUrl: 'https://x/u?s=1',
        uploadDeadline: 1e15,
      });
      expect(await codeOf(journal.transition(item.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
      expect((await journal.get(item.id))?.state).toBe('created');
    });
  });
});
