/**
 * The pipeline nudges the follower of its own process when it records a job done: the whole agent
 * (real sandbox, real journal), the clock standing still, and follow.firstPollMs an hour, so the
 * follower's timer never reads the journal after its start. The job is in the returns store all
 * the same, read because the pipeline said so.
 */
import { expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makePdf, useHarness } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { returnsConfig } from './support/returns-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

it('records a job the pipeline finished in the returns store at once, with no clock move to fire its timer', async () => {
  const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
    returns: returnsConfig(h, { firstPollMs: 3_600_000 }),
  });
  const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
  h.drop(
    'pdf',
    'invoice-3.pdf',
    await makePdf('invoice 3', { recipient: { EMAIL_ADDRESS: 'cy@example.com' } }),
  );
  await waitFor(async () => (await agent.journal.stats()).files.done === 1);
  const jobId = (await h.jobs()).find((j) => j.filename === 'invoice-3.pdf')!.id;

  await waitFor(async () => (await agent.returns!.store.job(jobId)) !== undefined);
  expect(await agent.returns!.store.job(jobId)).toMatchObject({ done: false, polls: 0 });
  await agent.stop();
});
