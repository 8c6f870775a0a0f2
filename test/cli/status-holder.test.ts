/** `docex-agent status` names the agent holding an unfinished file (several agents on one journal). */
import { describe, expect, it } from 'vitest';
import { formatItem } from '../../src/cli/status-runner.js';
import type { JournalItem } from '../../src/journal/schema.js';

const item: JournalItem = {
  id: 3,
  parentId: undefined,
  kind: 'file',
  rowIndex: undefined,
  folder: 'invoices',
  workflowId: 'wf-1',
  managedCompanyId: undefined,
  mode: 'single-file',
  fileName: 'a.pdf',
  sourcePath: '/srv/in/a.pdf',
  claimedPath: '/srv/in/.processing/a.pdf',
  size: 10,
  mtimeMs: 0,
  sha256: 'ab'.repeat(32),
  allowDuplicates: false,
  state: 'created',
  attempt: 1,
  jobName: 'docex-3-1',
  jobId: 'job_1',
  uploadDeadline: undefined,
  hasUploadUrl: true,
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
  owner: 'agent-b',
  epoch: 2,
  leaseUntil: Date.UTC(2026, 10, 27, 9, 0, 0),
};

describe('the holder of a file in `docex-agent status`', () => {
  it('names the agent, the epoch and the lease end of an unfinished file', () => {
    expect(formatItem(item, [])).toContain(
      '  held by agent agent-b (epoch 2, lease until 2026-11-27T09:00:00.000Z)\n',
    );
  });

  it('names no holder for a finished file, nor on a journal without leases', () => {
    expect(formatItem({ ...item, state: 'done' }, [])).not.toContain('held by');
    expect(formatItem({ ...item, owner: undefined, epoch: 0, leaseUntil: undefined }, [])).not.toContain(
      'held by',
    );
  });
});
