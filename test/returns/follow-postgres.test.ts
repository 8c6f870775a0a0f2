/**
 * The whole agent with `journal.url`: the journal, the returns store and the inbox store all in
 * PostgreSQL, none as SQLite files in the state folder. A dropped PDF is followed to its final
 * event, its proofs saved, its status file and daily CSV row written, and `report` rebuilds the
 * CSV from the database alone.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { rebuildDailyCsv } from '../../src/cli/report-runner.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makePdf, useHarness } from '../pipeline/support/agent-harness.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';
import { day, finalWithProofs, proofDir, pump, returnsConfig, statusDir } from './support/returns-harness.js';

let h: Harness;

describePostgres('the return path on a PostgreSQL journal', () => {
  useHarness({}, (made) => {
    h = made;
  });

  it('follows a dropped PDF to its proofs, status file and daily CSV row with no SQLite file in the state folder', async () => {
    const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
      journal: { url: await testDatabase(), sslmode: 'disable' },
      returns: returnsConfig(
        h,
        {},
        { statuses: { target: { type: 'local', path: statusDir(h) }, dailyCsvSchedule: '0 * * * * *' } },
      ),
    });
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const claimedDay = day(h.clock.now());
    h.drop(
      'pdf',
      'invoice-9.pdf',
      await makePdf('invoice 9', { recipient: { EMAIL_ADDRESS: 'bo@example.com' } }),
    );
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);

    const status = await pump(h, () => finalWithProofs(h, `${claimedDay}/invoice-9.pdf.status.json`));
    const event = status.jobs[0]!.sendingEvents[0]!;
    expect(event).toMatchObject({ recipient: 'bo@example.com', businessStatus: 'SUCCESS', final: true });
    const proofs = event.documents.filter((d) => d.type !== 'ORIGINAL');
    expect(proofs.map((d) => d.type).sort()).toEqual(['DELIVERY_PROOF', 'SUBMISSION_REPORT']);
    for (const doc of proofs) {
      expect(
        readFileSync(path.join(proofDir(h), doc.proof!))
          .subarray(0, 5)
          .toString(),
      ).toBe('%PDF-');
    }

    const csvFile = path.join(statusDir(h), `statuses-${claimedDay}.csv`);
    await h.advance(86_400_000);
    await pump(h, () => existsSync(csvFile));
    const written = readFileSync(csvFile);
    expect(written.toString()).toContain(event.sendingEventId);
    await agent.stop();
    for (const file of ['journal.sqlite', 'returns.sqlite', 'inbox.sqlite']) {
      expect(existsSync(path.join(config.stateDir, file)), file).toBe(false);
    }

    rmSync(csvFile);
    expect(await rebuildDailyCsv(config, claimedDay, h.clock)).toMatchObject({ rows: 1 });
    expect(readFileSync(csvFile)).toEqual(written);
  });
});
