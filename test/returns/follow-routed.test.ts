/**
 * The return path follows a routed job as the managed company recorded on its item at the claim,
 * not as its folder's: the folder has no company, the route sends as the managed one.
 */
import { describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makePdf, useHarness } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { day, finalWithProofs, pump, returnsConfig, statusDir } from './support/returns-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

describe('following a routed job', () => {
  it("writes the status and proofs of a job sent as a route's managed company from a folder without one", async () => {
    const config = h.config(
      [
        {
          name: 'routed',
          workflowId: SEED.workflows.pdfEmail,
          routes: [
            {
              match: '*-managed.pdf',
              workflowId: SEED.workflows.managedPdfEmail,
              managedCompanyId: SEED.managedCompanyId,
            },
          ],
        },
      ],
      { returns: returnsConfig(h, {}, { statuses: { target: { type: 'local', path: statusDir(h) } } }) },
    );
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const claimedDay = day(h.clock.now());
    h.drop(
      'routed',
      'letter-managed.pdf',
      await makePdf('managed letter', { recipient: { EMAIL_ADDRESS: 'ann@example.com' } }),
    );
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);
    const status = await pump(h, () => finalWithProofs(h, `${claimedDay}/letter-managed.pdf.status.json`));
    expect(status).toMatchObject({ file: 'letter-managed.pdf', folder: 'routed', final: true });
    expect(status.jobs[0]).toMatchObject({ status: 'COMPLETED', followed: 'done', errors: [] });
    await agent.stop();
  });
});
