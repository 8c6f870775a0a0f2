/**
 * Conformance: recording a claim, the legal and illegal moves, what each move records, look-ups,
 * and that a reopened journal holds the same. Every backend (support/backends.ts).
 */
import { beforeEach, expect, it } from 'vitest';
import { parseJobName } from '../../../src/journal/job-name.js';
import type { JournalStore } from '../../../src/journal/store.js';
import { describeEachBackend, type JournalUnderTest } from '../support/backends.js';
import { claimInput, UPLOAD_URL } from '../support/journal-harness.js';
import { claimed, codeOf } from '../support/steps.js';

describeEachBackend('journal moves', (backend) => {
  let t: JournalUnderTest;
  let journal: JournalStore;

  beforeEach(async () => {
    t = await backend.open();
    journal = t.journal;
    return () => t.cleanup();
  });

  it('records the claim: size, mtime, SHA-256, paths, workflow, time from the injected clock', async () => {
    const item = await claimed(journal);
    expect(item).toMatchObject({
      kind: 'file',
      state: 'claimed',
      folder: 'invoices',
      fileName: 'invoice-2026-0001.pdf',
      sourcePath: '/srv/erp/in/invoice-2026-0001.pdf',
      claimedPath: '/srv/erp/in/.processing/invoice-2026-0001.pdf',
      size: 1234,
      mtimeMs: 1_763_700_000_000,
      sha256: claimInput().sha256,
      workflowId: 'wf-pdf-email',
      mode: 'single-file',
      allowDuplicates: false,
      attempt: 0,
      hasUploadUrl: false,
      parentId: undefined,
      rowIndex: undefined,
      jobId: undefined,
      jobName: undefined,
      failedTries: 0,
      nextTryAt: undefined,
      lastFailureCode: undefined,
      lostAnswers: 0,
      orphanJobs: 0,
      createdAt: t.clock.now(),
      updatedAt: t.clock.now(),
    });
    expect(await journal.get(item.id)).toEqual(item);
    expect(await journal.history(item.id)).toEqual([
      {
        itemId: item.id,
        from: undefined,
        to: 'claimed',
        at: t.clock.now(),
        detail: { size: 1234, sha256: item.sha256 },
      },
    ]);
  });

  it('walks a single-file item to done, each move stamped by the clock, with a deterministic job name', async () => {
    const item = await claimed(journal);
    await journal.transition(item.id, 'validated');
    t.clock.advance(1000);
    const creating = await journal.transition(item.id, 'creating');
    expect(creating.attempt).toBe(1);
    expect(creating.updatedAt).toBe(t.clock.now());
    expect(parseJobName(creating.jobName!)).toMatchObject({ sha12: item.sha256.slice(0, 12), attempt: 1 });
    t.clock.advance(1000);
    const deadline = t.clock.now() + 2 * 3_600_000;
    const created = await journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: deadline,
    });
    expect(created).toMatchObject({ state: 'created', jobId: 'job-1', hasUploadUrl: true });
    await journal.transition(item.id, 'uploaded', { md5: 'abc123' });
    t.clock.advance(1000);
    const done = await journal.transition(item.id, 'done');
    expect(done).toMatchObject({
      state: 'done',
      jobId: 'job-1',
      jobName: creating.jobName,
      uploadDeadline: deadline,
      uploadedMd5: 'abc123',
      hasUploadUrl: false,
      createdAt: item.createdAt,
    });
    expect(done.updatedAt).toBe(t.clock.now());
    const history = await journal.history(item.id);
    expect(history.map((e) => [e.from, e.to])).toEqual([
      [undefined, 'claimed'],
      ['claimed', 'validated'],
      ['validated', 'creating'],
      ['creating', 'created'],
      ['created', 'uploaded'],
      ['uploaded', 'done'],
    ]);
    expect(history.map((e) => e.at - item.createdAt)).toEqual([0, 0, 1000, 2000, 2000, 3000]);
    expect(history[2]!.detail).toEqual({ attempt: 1, jobName: creating.jobName });
    expect(history[4]!.detail).toEqual({ jobId: 'job-1', md5: 'abc123' });
    expect(history[5]!.detail).toEqual({ jobId: 'job-1' });
    expect((await journal.byJobId('job-1'))?.id).toBe(item.id);
    expect(await journal.unfinished()).toEqual([]);
  });

  it('records a claim that passed its checks as validated with its intent, in one transaction', async () => {
    const item = await claimed(journal, { validatedNote: 'pdf' });
    expect(item).toMatchObject({ state: 'creating', attempt: 1 });
    expect(parseJobName(item.jobName!)).toMatchObject({ sha12: item.sha256.slice(0, 12), attempt: 1 });
    expect((await journal.history(item.id)).map((e) => [e.from, e.to, e.at, e.detail])).toEqual([
      [undefined, 'claimed', t.clock.now(), { size: item.size, sha256: item.sha256 }],
      ['claimed', 'validated', t.clock.now(), { note: 'pdf' }],
      ['validated', 'creating', t.clock.now(), { attempt: 1, jobName: item.jobName }],
    ]);
    expect(item.updatedAt).toBe(item.createdAt);
    // The same content again is still a duplicate, refused at its claim, never validated.
    const again = await journal.recordClaim(
      claimInput({ sourcePath: '/drop/again.pdf', validatedNote: 'pdf' }),
    );
    expect(again.kind).toBe('duplicate');
    expect((await journal.history(again.item.id)).map((e) => e.to)).toEqual(['rejected']);
  });

  it('a file split into payload rows goes only to done once its rows are final, or to rejected', async () => {
    const file = await claimed(journal, { fileName: 'batch.csv', mode: 'payload-word' });
    await journal.transition(file.id, 'validated');
    const [row] = await journal.addRows(file.id, [{ rowIndex: 0 }]);
    expect(await codeOf(journal.transition(file.id, 'creating'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(await codeOf(journal.transition(file.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
    await journal.transition(row!.id, 'rejected', { code: 'DOCEX_REJECTED', reason: 'test' });
    expect((await journal.transition(file.id, 'done')).state).toBe('done');
    expect(await codeOf(journal.transition(file.id, 'rejected', { code: 'DOCEX_REJECTED' }))).toBe(
      'DOCEX_JOURNAL_TRANSITION',
    );
  });

  it('refuses an illegal move with DOCEX_JOURNAL_TRANSITION and changes nothing', async () => {
    const item = await claimed(journal);
    t.clock.advance(1000);
    expect(await codeOf(journal.transition(item.id, 'uploaded', { md5: 'x' }))).toBe(
      'DOCEX_JOURNAL_TRANSITION',
    );
    expect(await codeOf(journal.transition(item.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(await codeOf(journal.transition(item.id, 'claimed'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(await journal.get(item.id)).toEqual(item);
    expect(await journal.history(item.id)).toHaveLength(1);
    // Final states take no move at all.
    await journal.transition(item.id, 'rejected', { code: 'DOCEX_REJECTED', reason: 'test' });
    expect(await codeOf(journal.transition(item.id, 'validated'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(await codeOf(journal.transition(item.id, 'rejected', { code: 'DOCEX_REJECTED' }))).toBe(
      'DOCEX_JOURNAL_TRANSITION',
    );
    expect(await journal.history(item.id)).toHaveLength(2);
  });

  it('refuses a move of an item it does not have with DOCEX_JOURNAL_UNKNOWN_ITEM', async () => {
    expect(await codeOf(journal.transition(9999, 'validated'))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
    expect(await journal.get(9999)).toBeUndefined();
    expect(await journal.history(9999)).toEqual([]);
  });

  it('refuses a move without the fields it records (DOCEX_JOURNAL_FIELDS) and rolls back', async () => {
    const item = await claimed(journal);
    await journal.transition(item.id, 'validated');
    const creating = await journal.transition(item.id, 'creating');
    expect(await codeOf(journal.transition(item.id, 'created', { jobId: 'job-1' }))).toBe(
      'DOCEX_JOURNAL_FIELDS',
    );
    expect(
      await codeOf(journal.transition(item.id, 'created', { uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 })),
    ).toBe('DOCEX_JOURNAL_FIELDS');
    expect(await codeOf(journal.transition(item.id, 'rejected'))).toBe('DOCEX_JOURNAL_FIELDS');
    expect(await journal.get(item.id)).toEqual(creating);
    expect(await journal.history(item.id)).toHaveLength(3);
    await journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: 1e15,
    });
    expect(await codeOf(journal.transition(item.id, 'uploaded'))).toBe('DOCEX_JOURNAL_FIELDS');
    expect((await journal.get(item.id))?.state).toBe('created');
  });

  it('records a refusal with its code and reason; the reason defaults to the code', async () => {
    const a = await claimed(journal, { fileName: 'a.pdf' });
    const refused = await journal.transition(a.id, 'rejected', {
      code: 'DOCEX_INPUT_EMPTY',
      reason: 'empty',
    });
    expect(refused).toMatchObject({
      state: 'rejected',
      rejectCode: 'DOCEX_INPUT_EMPTY',
      rejectReason: 'empty',
    });
    expect((await journal.history(a.id)).at(-1)?.detail).toEqual({
      code: 'DOCEX_INPUT_EMPTY',
      reason: 'empty',
    });
    const b = await claimed(journal, { fileName: 'b.pdf' });
    expect(await journal.transition(b.id, 'rejected', { code: 'DOCEX_INPUT_EMPTY' })).toMatchObject({
      rejectReason: 'DOCEX_INPUT_EMPTY',
    });
  });

  it('a recreate records a new intent: the attempt counts up, the name changes, the old job id leaves', async () => {
    const item = await claimed(journal);
    await journal.transition(item.id, 'validated');
    const first = await journal.transition(item.id, 'creating');
    await journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: t.clock.now(),
    });
    const again = await journal.transition(item.id, 'creating', { note: 'upload window over' });
    expect(again).toMatchObject({
      attempt: 2,
      jobId: undefined,
      hasUploadUrl: false,
      uploadDeadline: undefined,
    });
    expect(again.jobName).not.toBe(first.jobName);
    expect(parseJobName(again.jobName!)?.attempt).toBe(2);
    expect((await journal.history(item.id)).at(-1)?.detail).toEqual({
      note: 'upload window over',
      previousJobId: 'job-1',
      attempt: 2,
      jobName: again.jobName,
    });
    expect(await journal.byJobId('job-1')).toBeUndefined();
    // creating -> creating: an intent whose answer never came is replaced by a new one.
    const third = await journal.transition(item.id, 'creating');
    expect(third.attempt).toBe(3);
    expect(parseJobName(third.jobName!)?.attempt).toBe(3);
  });

  it('reopening keeps items, rows, history and stats', async () => {
    const item = await claimed(journal, { fileName: 'batch.csv', mode: 'payload-word' });
    await journal.transition(item.id, 'validated');
    const rows = await journal.addRows(item.id, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
    await journal.transition(rows[0]!.id, 'creating');
    const before = {
      item: await journal.get(item.id),
      rows: await journal.rowsOf(item.id),
      history: await journal.history(rows[0]!.id),
      stats: await journal.stats(),
    };
    const reopened = await t.reopen();
    expect(reopened).not.toBe(journal);
    expect({
      item: await reopened.get(item.id),
      rows: await reopened.rowsOf(item.id),
      history: await reopened.history(rows[0]!.id),
      stats: await reopened.stats(),
    }).toEqual(before);
    expect(before.stats).toEqual({
      files: { claimed: 0, validated: 1, creating: 0, created: 0, uploaded: 0, done: 0, rejected: 0 },
      rows: { claimed: 0, validated: 1, creating: 1, created: 0, uploaded: 0, done: 0, rejected: 0 },
      unfinished: 3,
    });
  });

  it('lists the unfinished items, files and rows, oldest first', async () => {
    const a = await claimed(journal, { fileName: 'a.pdf' });
    const b = await claimed(journal, { fileName: 'b.csv', mode: 'payload-word' });
    const c = await claimed(journal, { fileName: 'c.pdf' });
    await journal.transition(c.id, 'rejected', { code: 'DOCEX_REJECTED' });
    await journal.transition(b.id, 'validated');
    const [r0, r1] = await journal.addRows(b.id, [
      { rowIndex: 0 },
      { rowIndex: 1, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'bad' } },
    ]);
    expect((await journal.unfinished()).map((i) => [i.id, i.state])).toEqual([
      [a.id, 'claimed'],
      [b.id, 'validated'],
      [r0!.id, 'validated'],
    ]);
    expect(r1!.state).toBe('rejected');
  });

  it('looks items up by source or claimed path, newest first, and by job id', async () => {
    const a = await claimed(journal);
    await journal.transition(a.id, 'rejected', { code: 'DOCEX_REJECTED', reason: 'test' });
    const b = await claimed(journal);
    expect((await journal.byPath(a.sourcePath!)).map((i) => i.id)).toEqual([b.id, a.id]);
    expect((await journal.byPath(a.claimedPath!)).map((i) => i.id)).toEqual([b.id, a.id]);
    expect(await journal.byPath('/nowhere')).toEqual([]);
    expect(await journal.byJobId('nope')).toBeUndefined();
  });

  it('finds by job id the newest item that holds it', async () => {
    const a = await claimed(journal, { fileName: 'a.pdf' });
    await journal.transition(a.id, 'validated');
    await journal.transition(a.id, 'creating');
    await journal.transition(a.id, 'created', {
      jobId: 'job-x',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: 1e15,
    });
    expect((await journal.byJobId('job-x'))?.id).toBe(a.id);
    // A payload row's own job finds the row.
    const b = await claimed(journal, { fileName: 'b.csv', mode: 'payload-word' });
    await journal.transition(b.id, 'validated');
    const [row] = await journal.addRows(b.id, [{ rowIndex: 0 }]);
    await journal.transition(row!.id, 'creating');
    await journal.transition(row!.id, 'created', { jobId: 'job-row' });
    expect(await journal.byJobId('job-row')).toMatchObject({ id: row!.id, kind: 'row', parentId: b.id });
  });

  it('lists the most recently moved files first for status output', async () => {
    const a = await claimed(journal);
    t.clock.advance(1000);
    const b = await claimed(journal, { fileName: 'b.pdf' });
    t.clock.advance(1000);
    await journal.transition(a.id, 'validated');
    expect((await journal.recent(10)).map((i) => i.id)).toEqual([a.id, b.id]);
    expect((await journal.recent(1)).map((i) => i.id)).toEqual([a.id]);
    // Payload rows are not files.
    const c = await claimed(journal, { fileName: 'c.csv', mode: 'payload-word' });
    await journal.transition(c.id, 'validated');
    t.clock.advance(1000);
    await journal.addRows(c.id, [{ rowIndex: 0 }]);
    expect((await journal.recent()).map((i) => i.kind)).toEqual(['file', 'file', 'file']);
  });
});
