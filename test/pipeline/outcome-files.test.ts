import { describe, expect, it } from 'vitest';
import type { JournalItem } from '../../src/journal/index.js';
import { resultRecord } from '../../src/pipeline/outcome-files.js';

const item = (managedCompanyId: string | undefined) =>
  ({
    fileName: 'globex-2026-0001.pdf',
    folder: 'clients',
    workflowId: 'wf_managed_2_pdf_email',
    managedCompanyId,
    jobId: 'job_1',
    jobName: 'globex-2026-0001.pdf.dx-1',
    sha256: 'a'.repeat(64),
    size: 10,
    uploadedMd5: 'b'.repeat(32),
    createdAt: Date.parse('2026-11-28T10:00:00.000Z'),
  }) as JournalItem;

describe('resultRecord', () => {
  it('names the workflow and the managed company the job was created with', () => {
    expect(resultRecord(item('cmp_managed_2'), Date.parse('2026-11-28T10:00:05.000Z'))).toEqual({
      status: 'uploaded',
      file: 'globex-2026-0001.pdf',
      folder: 'clients',
      workflowId: 'wf_managed_2_pdf_email',
      managedCompanyId: 'cmp_managed_2',
      jobId: 'job_1',
      jobName: 'globex-2026-0001.pdf.dx-1',
      sha256: 'a'.repeat(64),
      size: 10,
      md5: 'b'.repeat(32),
      claimedAt: '2026-11-28T10:00:00.000Z',
      archivedAt: '2026-11-28T10:00:05.000Z',
    });
  });

  it("leaves managedCompanyId out for a job sent as the service account's own company", () => {
    for (const none of ['', undefined]) {
      expect(resultRecord(item(none), 0)).not.toHaveProperty('managedCompanyId');
    }
  });
});
