import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { renderPayloadDocumentPdf, renderProofPdf } from '../../src/sandbox/proofs.js';

describe('the sandbox PDFs', () => {
  it('writes a proof pdf-lib opens, with its title, subject and dates', async () => {
    const pdf = await PDFDocument.load(
      renderProofPdf({
        type: 'SUBMISSION_REPORT',
        sendingEventId: 'se_1',
        jobId: 'job_1',
        recipient: 'jane (accounts) \\ doe@example.com',
        channels: ['EMAIL'],
        startedAt: '2026-11-27T10:00:00.000Z',
        endedAt: '2026-11-27T10:00:10.000Z',
        outcome: 'SUCCESS',
      }),
      // Loading would otherwise write pdf-lib's own producer and dates over the file's.
      { updateMetadata: false },
    );
    expect(pdf.getPageCount()).toBe(1);
    expect(pdf.getTitle()).toBe('Submission report');
    expect(pdf.getSubject()).toBe('Submission report of sending event se_1');
    expect(pdf.getProducer()).toBe('docex sandbox');
    expect(pdf.getCreationDate()?.toISOString()).toBe('2026-11-27T10:00:10.000Z');
  });

  it('writes a payload document of many lines on as many pages as they need, brackets, backslashes and characters outside WinAnsi included', async () => {
    const templateData = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`field${i}`, `value (${i}) \\ ünïcode ✓`]),
    );
    const pdf = await PDFDocument.load(
      renderPayloadDocumentPdf({
        jobName: 'Letters (November)',
        recipient: 'ada@example.com',
        templateData,
        createdAt: '2026-11-27T10:00:00.000Z',
      }),
    );
    // 102 lines at 18 points from 740 (first page) or 790 down to 60: 38, then 41 a page.
    expect(pdf.getPageCount()).toBe(3);
    expect(pdf.getTitle()).toBe('Letters (November)');
    expect(pdf.getSubject()).toBe('Generated for ada@example.com');
  });
});
