import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { returnsSchema } from '../../src/config/returns-schema.js';
import {
  extensionOf,
  proofName,
  proofPath,
  safeSegment,
  statusFilePath,
} from '../../src/returns/proof-names.js';
import { CSV_COLUMNS, renderCsv } from '../../src/returns/status-csv.js';
import type { DocumentRow, EventRow, JobRow, SourceRow } from '../../src/returns/store.js';
import { buildStatusDocument } from './support/status-document.js';

const input = {
  date: '2026-11-21',
  folder: 'pdf',
  file: 'invoice 7.pdf',
  jobId: 'job_1',
  sendingEventId: 'se_1',
  type: 'DELIVERY_PROOF',
  fileReference: 'blob_9',
  documentName: 'delivery-proof-se_1.pdf',
  contentType: 'application/pdf',
};

describe('proof and status names', () => {
  it('fills the default template with the claim day, the file stem, the event and the type', () => {
    const template = returnsSchema.parse({}).proofs.nameTemplate;
    expect(proofPath(template, input)).toBe('2026-11-21/invoice 7/se_1-DELIVERY_PROOF.pdf');
  });

  it('never lets a value add folders or climb out of the proofs folder', () => {
    const path = proofPath('<date>/<stem>/<sendingEventId>-<type>.<ext>', {
      ...input,
      file: '../../etc/pass:wd.pdf',
      sendingEventId: 'se/../../x',
    });
    expect(path.split('/')).toHaveLength(3);
    expect(
      path.split('/').every((segment) => segment !== '..' && segment !== '.' && !segment.includes('\\')),
    ).toBe(true);
    expect(path.startsWith('2026-11-21/')).toBe(true);
    expect(safeSegment('a\u0000b\nc')).toBe('a_b_c');
    expect(safeSegment('...')).toBe('_');
  });

  it('takes the extension from the document name, else from its content type', () => {
    expect(extensionOf('x.PDF', undefined)).toBe('pdf');
    expect(extensionOf('noext', 'application/xml; charset=utf-8')).toBe('xml');
    expect(extensionOf(undefined, undefined)).toBe('bin');
  });

  it('refuses a template without the event id or with an unknown placeholder', () => {
    expect(returnsSchema.safeParse({ proofs: { nameTemplate: '<date>/<type>.<ext>' } }).success).toBe(false);
    expect(returnsSchema.safeParse({ proofs: { nameTemplate: '<sendingEventId>-<kind>' } }).success).toBe(
      false,
    );
    expect(
      returnsSchema.safeParse({ proofs: { nameTemplate: '<jobId>/<sendingEventId>-<fileReference>' } })
        .success,
    ).toBe(true);
  });

  it('keeps a recursive folder file’s sub-path above its status file and proofs', () => {
    expect(statusFilePath('2026-11-21', 'acme/invoices/a.pdf', 12, false)).toBe(
      'acme/invoices/2026-11-21/a.pdf.status.json',
    );
    expect(statusFilePath('2026-11-21', 'acme/invoices/a.pdf', 12, true)).toBe(
      'acme/invoices/2026-11-21/a.pdf.12.status.json',
    );
    const owner = { day: '2026-11-21', folder: 'pdf', fileName: 'acme/invoices/a.pdf', jobId: 'job_1' };
    expect(
      proofName('<date>/<stem>/<sendingEventId>-<type>.<ext>', owner, 'se_1', {
        type: 'DELIVERY_PROOF',
        fileReference: 'blob_9',
        contentType: 'application/pdf',
      }),
    ).toBe('acme/invoices/2026-11-21/a/se_1-DELIVERY_PROOF.pdf');
  });

  it('takes a stored path that climbs or holds controls as one name, never as folders', () => {
    expect(statusFilePath('2026-11-21', '../../etc/a.pdf', 1, false)).toBe(
      '2026-11-21/_.._etc_a.pdf.status.json',
    );
    expect(statusFilePath('2026-11-21', 'a\nb/x.pdf', 1, false).split('/')).toHaveLength(2);
  });

  it('names a second drop of the same name that day by its journal item id', () => {
    expect(statusFilePath('2026-11-21', 'a.pdf', 12, false)).toBe('2026-11-21/a.pdf.status.json');
    expect(statusFilePath('2026-11-21', 'a.pdf', 12, true)).toBe('2026-11-21/a.pdf.12.status.json');
  });
});

describe('status document and CSV rows (pure builders)', () => {
  const source: SourceRow = {
    itemId: 1,
    folder: 'pdf',
    fileName: 'a, "quoted".pdf',
    sha256: 'ab'.repeat(32),
    claimedAt: Date.parse('2026-11-21T10:00:00.000Z'),
    day: '2026-11-21',
    statusPath: '2026-11-21/a.pdf.status.json',
    version: 3,
    writtenVersion: 2,
  };
  const job: JobRow = {
    jobId: 'job_1',
    sourceId: 1,
    itemId: 1,
    rowIndex: undefined,
    label: undefined,
    jobName: 'a-123',
    recordedAt: 0,
    status: 'COMPLETED',
    jobJson: JSON.stringify({ id: 'job_1', status: 'COMPLETED', errorList: [] }),
    nextPollAt: 0,
    unchangedPolls: 0,
    polls: 3,
    done: true,
    gaveUp: undefined,
  };
  const wire = {
    id: 'se_1',
    jobId: 'job_1',
    status: 'FAILURE',
    businessStatus: 'REJECTED',
    properties: [{ name: 'recipient', value: 'bob@example.com' }],
    sendingSourceFileReference: 'a.pdf',
    startDate: '2026-11-21T10:00:01.000Z',
    endDate: '2026-11-21T10:00:09.000Z',
    errorList: [{ code: 'RECIPIENT_REJECTED', message: 'no, thanks', taskType: 'EMAIL' }],
    warningList: [{ message: 'slow' }],
    documents: [{ fileReference: 'blob_2', type: 'SUBMISSION_REPORT', name: 'r.pdf' }],
  };
  const event: EventRow = {
    id: 'se_1',
    jobId: 'job_1',
    businessStatus: 'REJECTED',
    status: 'FAILURE',
    finalAt: Date.parse('2026-11-21T10:00:10.000Z'),
    finalDay: '2026-11-21',
    eventJson: JSON.stringify(wire),
  };
  const doc = (state: DocumentRow['state']): DocumentRow => ({
    sendingEventId: 'se_1',
    fileReference: 'blob_2',
    jobId: 'job_1',
    type: 'SUBMISSION_REPORT',
    name: 'r.pdf',
    contentType: 'application/pdf',
    size: 10,
    path: '2026-11-21/a/se_1-SUBMISSION_REPORT.pdf',
    state,
    failures: 0,
    nextTryAt: 0,
    lastError: undefined,
  });

  it('is final only once the jobs are done and every proof is written', () => {
    const pending = buildStatusDocument({
      source,
      jobs: [{ job, events: [{ event, documents: [doc('pending')] }] }],
    });
    expect(pending.final).toBe(false);
    expect(pending.jobs[0]!.sendingEvents[0]!.documents[0]!.proof).toBeUndefined();
    const done = buildStatusDocument({
      source,
      jobs: [{ job, events: [{ event, documents: [doc('done')] }] }],
    });
    expect(done.final).toBe(true);
    expect(done.jobs[0]!.sendingEvents[0]).toMatchObject({
      recipient: 'bob@example.com',
      businessStatus: 'REJECTED',
      status: 'FAILURE',
      errors: [{ code: 'RECIPIENT_REJECTED', message: 'no, thanks', taskType: 'EMAIL' }],
      warnings: [{ message: 'slow' }],
      documents: [{ type: 'SUBMISSION_REPORT', proof: '2026-11-21/a/se_1-SUBMISSION_REPORT.pdf' }],
    });
  });

  it('writes one CSV row per event, with the documented columns, quoting what needs it', () => {
    const text = renderCsv([{ event, job, source, documents: [doc('done')] }]);
    const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
    expect(parsed.meta.fields).toEqual([...CSV_COLUMNS]);
    expect(parsed.data).toEqual([
      expect.objectContaining({
        finalAt: '2026-11-21T10:00:10.000Z',
        file: 'a, "quoted".pdf',
        jobId: 'job_1',
        sendingEventId: 'se_1',
        recipient: 'bob@example.com',
        businessStatus: 'REJECTED',
        errorCodes: 'RECIPIENT_REJECTED',
        errors: 'RECIPIENT_REJECTED: no, thanks',
        warnings: 'slow',
        proofs: '2026-11-21/a/se_1-SUBMISSION_REPORT.pdf',
      }),
    ]);
    expect(text.endsWith('\r\n')).toBe(true);
  });

  it('writes the daily statuses CSV formula-safe: a file name or recipient that starts a formula is prefixed with a quote', () => {
    const hostile = { ...source, fileName: '=HYPERLINK("http://evil.example","open me").pdf' };
    const recipient = '@SUM(1+1)*cmd|/C calc!A0';
    const hostileEvent = {
      ...event,
      eventJson: JSON.stringify({ ...wire, properties: [{ name: 'recipient', value: recipient }] }),
    };
    const text = renderCsv([{ event: hostileEvent, job, source: hostile, documents: [] }]);
    const row = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data[0]!;
    expect(row['file']).toBe(`'${hostile.fileName}`);
    expect(row['recipient']).toBe(`'${recipient}`);
  });
});
