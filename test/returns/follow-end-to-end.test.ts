import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { rebuildDailyCsv } from '../../src/cli/report-runner.js';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, listFiles, makePdf, md5, useHarness } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import {
  day,
  finalWithProofs,
  proofDir,
  pump,
  readStatus,
  returnsConfig,
  statusDir,
} from './support/returns-harness.js';

let h: Harness;

// The same suite under both names profiles of the sandbox (specification and live reference).
describe.each(NAMES_PROFILES)('names profile %s', (names) => {
  useHarness({ names }, (made) => {
    h = made;
  });

  describe('following jobs to the end (real sandbox, real journal, real files)', () => {
    it('writes the status file, both proofs and the daily CSV rows of a dropped PDF', async () => {
      const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
        returns: returnsConfig(
          h,
          {},
          { statuses: { target: { type: 'local', path: statusDir(h) }, dailyCsvSchedule: '0 * * * * *' } },
        ),
      });
      const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
      const claimedDay = day(h.clock.now());
      // The recipient the PDF workflow reads from the text ("Email: …").
      h.drop(
        'pdf',
        'invoice-7.pdf',
        await makePdf('invoice 7', { recipient: { EMAIL_ADDRESS: 'ann@example.com' } }),
      );
      await waitFor(async () => (await agent.journal.stats()).files.done === 1);
      const jobId =
        (await agent.journal.stats()) && (await h.jobs()).find((j) => j.filename === 'invoice-7.pdf')!.id;

      const statusPath = `${claimedDay}/invoice-7.pdf.status.json`;
      const status = await pump(h, () => finalWithProofs(h, statusPath));
      expect(status).toMatchObject({ file: 'invoice-7.pdf', folder: 'pdf', final: true });
      expect(status.jobs).toHaveLength(1);
      expect(status.jobs[0]).toMatchObject({ jobId, status: 'COMPLETED', followed: 'done', errors: [] });
      const event = status.jobs[0]!.sendingEvents[0]!;
      expect(event).toMatchObject({
        recipient: 'ann@example.com',
        sourceFileReference: 'invoice-7.pdf',
        businessStatus: 'SUCCESS',
        status: 'SUCCESS',
        final: true,
        errors: [],
        warnings: [],
      });
      const proofs = event.documents.filter((d) => d.type !== 'ORIGINAL');
      expect(proofs.map((d) => d.type).sort()).toEqual(['DELIVERY_PROOF', 'SUBMISSION_REPORT']);
      for (const doc of proofs) {
        expect(doc.proof).toBe(`${claimedDay}/invoice-7/${event.sendingEventId}-${doc.type}.pdf`);
        const bytes = readFileSync(path.join(proofDir(h), doc.proof!));
        expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
        // The very bytes the service holds.
        const url = (await h.client.sendingEvents.downloadUrl(event.sendingEventId, doc.fileReference)).url;
        const original = await h.sandbox.files('GET', url);
        expect(md5(bytes)).toBe(md5(original.raw));
      }
      // No temp names left in the output folders.
      expect(listFiles(proofDir(h)).filter((f) => f.includes('.tmp') || f.includes('.part'))).toEqual([]);

      // The next day, the CSV of the day the event became final.
      const csvFile = path.join(statusDir(h), `statuses-${claimedDay}.csv`);
      expect(existsSync(csvFile)).toBe(false);
      // `report` for a day not over yet writes what is known; the nightly run still writes the day.
      expect(await rebuildDailyCsv(config, claimedDay, h.clock)).toMatchObject({ rows: 1 });
      rmSync(csvFile);
      await h.advance(86_400_000);
      await pump(h, () => existsSync(csvFile));
      const parsed = Papa.parse<Record<string, string>>(readFileSync(csvFile, 'utf8'), {
        header: true,
        skipEmptyLines: true,
      });
      expect(parsed.data).toHaveLength(1);
      expect(parsed.data[0]).toMatchObject({
        folder: 'pdf',
        file: 'invoice-7.pdf',
        jobId,
        sendingEventId: event.sendingEventId,
        recipient: 'ann@example.com',
        businessStatus: 'SUCCESS',
        status: 'SUCCESS',
        errorCodes: '',
      });
      expect(parsed.data[0]!['proofs']!.split(' ').sort()).toEqual(proofs.map((d) => d.proof).sort());
      await agent.stop();

      // `docex-agent report --date` rebuilds the same file from the state folder.
      const written = readFileSync(csvFile);
      rmSync(csvFile);
      const rebuilt = await rebuildDailyCsv(config, claimedDay, h.clock);
      expect(rebuilt).toMatchObject({ file: `statuses-${claimedDay}.csv`, rows: 1 });
      expect(readFileSync(csvFile)).toEqual(written);
      await expect(rebuildDailyCsv(config, '2026-13-01', h.clock)).rejects.toMatchObject({
        code: 'DOCEX_CLI_USAGE',
      });
    });

    it('reports a PDF without its recipient as a failed sending naming the missing identifier, in its status file and the daily CSV', async () => {
      const config = h.config([{ name: 'unaddressed', workflowId: SEED.workflows.pdfEmail }], {
        returns: returnsConfig(h),
      });
      const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
      const claimedDay = day(h.clock.now());
      h.drop(
        'unaddressed',
        'no-recipient.pdf',
        await makePdf('invoice without e-mail', { recipient: false }),
      );
      const status = await pump(h, () => finalWithProofs(h, `${claimedDay}/no-recipient.pdf.status.json`));
      const event = status.jobs[0]!.sendingEvents[0]!;
      expect(event).toMatchObject({ businessStatus: 'FAILURE', status: 'FAILURE', final: true });
      const reason =
        'no-recipient.pdf: channel identifier EMAIL_ADDRESS (label "Email:") not found in the text of the document';
      expect(event.errors).toEqual([
        expect.objectContaining({ code: 'CHANNEL_IDENTIFIER_NOT_FOUND', message: reason }),
      ]);
      await agent.stop();

      await rebuildDailyCsv(config, claimedDay, h.clock);
      const csv = readFileSync(path.join(statusDir(h), `statuses-${claimedDay}.csv`), 'utf8');
      const rows = Papa.parse<Record<string, string>>(csv, { header: true, skipEmptyLines: true }).data;
      expect(rows.find((r) => r['file'] === 'no-recipient.pdf')).toMatchObject({
        businessStatus: 'FAILURE',
        errorCodes: 'CHANNEL_IDENTIFIER_NOT_FOUND',
        errors: expect.stringContaining(reason),
      });
    });

    it('follows every row of a payload CSV into one status file of the CSV, one job per row', async () => {
      const config = h.config(
        [{ name: 'letters', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' }],
        { returns: returnsConfig(h) },
      );
      const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
      const today = day(h.clock.now());
      h.drop(
        'letters',
        'mailing.csv',
        'EMAIL_ADDRESS;data.name\r\nann@example.com;Ann\r\nbob@example.com;Bob\r\n',
      );
      const status = await pump(h, () => finalWithProofs(h, `${today}/mailing.csv.status.json`));
      expect(status.jobs.map((j) => j.row)).toEqual([0, 1]);
      expect(new Set(status.jobs.map((j) => j.jobId)).size).toBe(2);
      for (const job of status.jobs) {
        expect(job.sendingEvents).toHaveLength(1);
        expect(job.sendingEvents[0]).toMatchObject({ businessStatus: 'SUCCESS', final: true });
      }
      await agent.stop();
    });

    it('keeps two drops of the same name apart and reports a rejected sending with its error', async () => {
      const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
        returns: returnsConfig(h),
      });
      const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
      const today = day(h.clock.now());
      h.drop('pdf', 'reject-me.pdf', await makePdf('first'));
      await waitFor(async () => (await agent.journal.stats()).files.done >= 1);
      const first = await pump(h, () => finalWithProofs(h, `${today}/reject-me.pdf.status.json`));
      h.drop('pdf', 'reject-me.pdf', await makePdf('second, other content'));
      const secondItem = await waitFor(async () =>
        (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'reject-me.pdf'))).find(
          (i) => i.state === 'done' && i.jobId !== first.jobs[0]!.jobId,
        ),
      );
      // Its own claim's day: the pump above moved the clock, maybe past midnight.
      const secondPath = `${day(secondItem.createdAt)}/reject-me.pdf.${secondItem.id}.status.json`;
      const second = await pump(h, () => finalWithProofs(h, secondPath));
      expect(second.jobs[0]!.jobId).not.toBe(first.jobs[0]!.jobId);
      expect(readStatus(h, `${today}/reject-me.pdf.status.json`)?.jobs[0]?.jobId).toBe(first.jobs[0]!.jobId);
      const event = second.jobs[0]!.sendingEvents[0]!;
      expect(event).toMatchObject({ businessStatus: 'REJECTED', status: 'FAILURE', final: true });
      expect(event.errors[0]).toMatchObject({ code: 'RECIPIENT_REJECTED' });
      // A rejected sending has a submission report and no delivery proof.
      const proofs = event.documents.filter((d) => d.type !== 'ORIGINAL');
      expect(proofs).toEqual([
        expect.objectContaining({ type: 'SUBMISSION_REPORT', proof: expect.any(String) }),
      ]);
      await agent.stop();
    });
  });
});
