/**
 * A folder added by a configuration reload with its own managed company: its jobs are followed
 * with that company's header (real sandbox, which answers 404 to a job of another company).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFolders } from '../../src/agent/folders.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { day, finalWithProofs, proofsOf, pump, returnsConfig } from './support/returns-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await makeHarness();
});
afterAll(async () => {
  await h.cleanup();
});

describe('following the jobs of a folder added by reload', () => {
  it('polls them with the managed company of the new folder and writes their proofs', async () => {
    const pdf = { name: 'pdf', workflowId: SEED.workflows.pdfEmail };
    const managed = {
      name: 'managed',
      workflowId: SEED.workflows.managedPdfEmail,
      managedCompanyId: SEED.managedCompanyId,
    };
    const agent = await h.startAgent(h.config([pdf], { returns: returnsConfig(h) }), {
      returns: { maxSleepMs: 5 },
    });
    // What a reload does for an added folder: plan it, then Agent.addFolder.
    const reloaded = h.config([pdf, managed], { returns: returnsConfig(h) });
    const plan = await planFolders(
      reloaded.folders.filter((f) => f.name === 'managed'),
      (id, company) => h.client.workflows.get(id, company ? { managedCompanyId: company } : undefined),
      h.log,
    );
    await agent.addFolder(plan.running.get('managed')!, 'folders[1]');

    const claimed = day(h.clock.now());
    h.drop('managed', 'managed-1.pdf', await makePdf('managed 1'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);
    const status = await pump(h, () => finalWithProofs(h, `${claimed}/managed-1.pdf.status.json`));
    expect(status.jobs[0]).toMatchObject({ status: 'COMPLETED', followed: 'done' });
    expect(proofsOf(status).length).toBeGreaterThan(0);
    await agent.stop();
  });
});
