/**
 * Conformance: the upload URL is a credential. Kept for the uploader while its job waits, never in
 * an item, a history entry, a recovery plan, a reader's answer or a log line, and dropped as soon
 * as it is not needed. Every backend (support/backends.ts); what SQLite leaves in its WAL and free
 * pages is sqlite-secrets.test.ts.
 */
import { beforeEach, expect, it } from 'vitest';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, UPLOAD_URL_SIGNATURE as SIGNATURE, UPLOAD_URL } from '../support/journal-harness.js';

describeEachBackend('the upload URL is a credential', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  async function createdItem(): Promise<number> {
    const { item } = await journal.recordClaim(claimInput());
    await journal.transition(item.id, 'validated');
    await journal.transition(item.id, 'creating');
    await journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: t.clock.now() + 7_200_000,
      note: `created via ${UPLOAD_URL}`,
    });
    return item.id;
  }

  it('is kept for the uploader while the job waits, but is not in the item, its JSON, the history, the plan or the logs', async () => {
    const id = await createdItem();
    expect(await journal.revealUploadUrl(id)).toBe(UPLOAD_URL);
    const item = (await journal.get(id))!;
    expect(item.hasUploadUrl).toBe(true);
    expect(JSON.stringify(item)).not.toContain(SIGNATURE);
    expect(JSON.stringify(await journal.byJobId('job-1'))).not.toContain(SIGNATURE);
    expect(JSON.stringify(await journal.byPath(item.sourcePath!))).not.toContain(SIGNATURE);
    expect(JSON.stringify(await journal.recent())).not.toContain(SIGNATURE);
    expect(JSON.stringify(await journal.unfinished())).not.toContain(SIGNATURE);
    const history = await journal.history(id);
    expect(JSON.stringify(history)).not.toContain(SIGNATURE);
    expect(JSON.stringify(await journal.recoveryPlan())).not.toContain(SIGNATURE);
    // The note quoting it keeps the URL without its query.
    expect(history.at(-1)?.detail?.['note']).toBe(
      'created via https://127.0.0.1:8443/upload/job-1?[redacted]',
    );
    expect(t.logText()).toContain('journal transition');
    expect(t.logText()).not.toContain(SIGNATURE);
  });

  it('is in nothing a reader answers', async () => {
    const id = await createdItem();
    const reader = await t.reader();
    const answers = [
      await reader.get(id),
      await reader.byJobId('job-1'),
      await reader.byPath(claimInput().sourcePath),
      await reader.history(id),
      await reader.historyAfter(0, 100),
      await reader.pendingUploads(),
      await reader.unfinishedSince(t.clock.now(), 10),
    ];
    expect((answers[0] as { hasUploadUrl: boolean }).hasUploadUrl).toBe(true);
    expect(JSON.stringify(answers)).not.toContain(SIGNATURE);
  });

  it('survives a reopen while the job waits (a crash must not strand the upload)', async () => {
    const id = await createdItem();
    const reopened = await t.reopen();
    expect(await reopened.revealUploadUrl(id)).toBe(UPLOAD_URL);
    expect((await reopened.get(id))?.hasUploadUrl).toBe(true);
  });

  it('leaves the row when the upload is confirmed', async () => {
    const id = await createdItem();
    const uploaded = await journal.transition(id, 'uploaded', { md5: 'abc' });
    expect(uploaded.hasUploadUrl).toBe(false);
    expect(await journal.revealUploadUrl(id)).toBeUndefined();
    expect(await (await t.reopen()).revealUploadUrl(id)).toBeUndefined();
  });

  it('forgetUploadUrl drops it for good and leaves the rest of the item alone', async () => {
    const id = await createdItem();
    const before = (await journal.get(id))!;
    await journal.forgetUploadUrl(id);
    expect(await journal.revealUploadUrl(id)).toBeUndefined();
    const after = (await journal.get(id))!;
    expect(after).toEqual({ ...before, hasUploadUrl: false });
    // Forgetting again, or an item without one, is harmless.
    await journal.forgetUploadUrl(id);
    await journal.forgetUploadUrl(9999);
    expect(await (await t.reopen()).revealUploadUrl(id)).toBeUndefined();
  });

  it('is dropped when the item is rejected, and a reason quoting it loses the query', async () => {
    const id = await createdItem();
    const rejected = await journal.transition(id, 'rejected', {
      code: 'DOCEX_SOURCE_CHANGED',
      reason: `the file changed before PUT ${UPLOAD_URL} finished`,
    });
    const redacted = 'the file changed before PUT https://127.0.0.1:8443/upload/job-1?[redacted] finished';
    expect(rejected.rejectReason).toBe(redacted);
    expect(rejected.hasUploadUrl).toBe(false);
    expect((await journal.history(id)).at(-1)?.detail).toEqual({
      code: 'DOCEX_SOURCE_CHANGED',
      reason: redacted,
    });
    expect(await journal.revealUploadUrl(id)).toBeUndefined();
  });

  it('a payload row refused by the local rules keeps no URL in its reason either', async () => {
    const { item } = await journal.recordClaim(claimInput({ fileName: 'rows.csv', mode: 'payload-pdf' }));
    await journal.transition(item.id, 'validated');
    const [row] = await journal.addRows(item.id, [
      { rowIndex: 0, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: `points at ${UPLOAD_URL}` } },
    ]);
    expect(row!.rejectReason).toBe('points at https://127.0.0.1:8443/upload/job-1?[redacted]');
    expect(JSON.stringify(await journal.rowsOf(item.id))).not.toContain(SIGNATURE);
  });

  it('is dropped by a recreate', async () => {
    const id = await createdItem();
    const again = await journal.transition(id, 'creating');
    expect(again.hasUploadUrl).toBe(false);
    expect(await journal.revealUploadUrl(id)).toBeUndefined();
  });

  it('is not kept for a job without an upload step', async () => {
    const { item } = await journal.recordClaim(claimInput({ fileName: 'w.docx', mode: 'payload-word' }));
    await journal.transition(item.id, 'validated');
    await journal.transition(item.id, 'creating');
    await journal.transition(item.id, 'created', {
      jobId: 'job-w',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: 1e15,
    });
    expect(await journal.revealUploadUrl(item.id)).toBeUndefined();
  });
});
