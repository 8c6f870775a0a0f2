import { describe, expect, it } from 'vitest';
import type { JournalItem } from '../../../src/journal/index.js';
import { reconcile, sameRemoteFile } from '../../../src/sources/sftp/source-reconcile.js';

function item(state: JournalItem['state'], size = 100, mtimeMs = 1_700_000_000_000): JournalItem {
  return {
    id: 1,
    parentId: undefined,
    kind: 'file',
    rowIndex: undefined,
    folder: 'remote',
    workflowId: 'wf',
    managedCompanyId: undefined,
    mode: 'single-file',
    fileName: 'a.pdf',
    sourcePath: 'sftp://u@h:22/in/a.pdf',
    claimedPath: '/spool/.processing/a.pdf',
    size,
    mtimeMs,
    sha256: 'x'.repeat(64),
    allowDuplicates: false,
    state,
    attempt: 1,
    jobName: undefined,
    jobId: undefined,
    uploadDeadline: undefined,
    hasUploadUrl: false,
    uploadedMd5: undefined,
    label: undefined,
    payloadSha256: undefined,
    rejectCode: undefined,
    rejectReason: undefined,
    duplicateOf: undefined,
    createdAt: 0,
    updatedAt: 0,
    failedTries: 0,
    nextTryAt: undefined,
    lastFailureCode: undefined,
    lostAnswers: 0,
    orphanJobs: 0,
    owner: undefined,
    epoch: 0,
    leaseUntil: undefined,
  };
}

const entry = { size: 100, mtimeMs: 1_700_000_000_000 };

describe('reconciliation of a remote file found claimed (crash points)', () => {
  it('finishes the remote move of a file the journal says is done or rejected', () => {
    expect(reconcile(entry, item('done'), false)).toMatchObject({ action: 'finish' });
    expect(reconcile(entry, item('rejected'), true)).toMatchObject({ action: 'finish' });
  });

  it('leaves a file the pipeline still works on (its end moves the remote file)', () => {
    for (const state of ['claimed', 'validated', 'created', 'uploaded'] as const) {
      expect(reconcile(entry, item(state), false)).toEqual({ action: 'leave', why: 'in-pipeline' });
    }
  });

  it('hands a file another agent recorded (adopted from its claim folder) to the pipeline: its copy, or a new download', () => {
    const elsewhere = () => false;
    expect(reconcile(entry, item('created'), true, elsewhere)).toEqual({ action: 'offer' });
    expect(reconcile(entry, item('created'), false, elsewhere)).toEqual({ action: 'download' });
    // Final stays final whoever recorded it.
    expect(reconcile(entry, item('done'), false, elsewhere)).toMatchObject({ action: 'finish' });
  });

  it('leaves a file whose download reached the spool before the crash (recovery takes the local copy)', () => {
    expect(reconcile(entry, undefined, true)).toEqual({ action: 'leave', why: 'local-copy' });
  });

  it('downloads again a file claimed but never downloaded or recorded', () => {
    expect(reconcile(entry, undefined, false)).toEqual({ action: 'download' });
  });

  it('treats a journal item of another file with the same name (other size or mtime) as no record', () => {
    expect(reconcile(entry, item('done', 99), false)).toEqual({ action: 'download' });
    expect(reconcile(entry, item('done', 100, entry.mtimeMs + 5_000), false)).toEqual({ action: 'download' });
  });

  it('compares mtimes to the whole second (SFTP v3 has no finer times)', () => {
    expect(
      sameRemoteFile(item('done', 100, 1_700_000_000_000), { size: 100, mtimeMs: 1_700_000_000_999 }),
    ).toBe(true);
    expect(
      sameRemoteFile(item('done', 100, 1_700_000_000_000), { size: 100, mtimeMs: 1_700_000_001_000 }),
    ).toBe(false);
  });
});
