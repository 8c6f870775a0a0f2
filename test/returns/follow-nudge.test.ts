/**
 * The pipeline nudges the follower of its own process when it records a job done (recordDone ->
 * onJobDone -> Follower.jobsDone): the whole agent (real sandbox, real journal), the clock standing
 * still, follow.firstPollMs an hour and the sweep an hour apart, so the follower's timer never
 * reads the journal after its start, and webhooks off, so no webhook's nudge reads it either. The
 * job is in the returns store all the same, read because the pipeline said so: without that nudge
 * the test fails.
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
    returns: returnsConfig(h, { firstPollMs: 3_600_000, schedule: '0 0 * * * *' }),
  });
  // Nothing but the pipeline's nudge reads the journal after the start: no webhook receiver, and
  // the clock never moves.
  expect(config.webhooks.enabled).toBe(false);
  const startedAt = h.clock.now();
  const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
  expect(agent.inbound?.receiver).toBeUndefined();
  h.drop(
    'pdf',
    'invoice-3.pdf',
    await makePdf('invoice 3', { recipient: { EMAIL_ADDRESS: 'cy@example.com' } }),
  );
  await waitFor(async () => (await agent.journal.stats()).files.done === 1);
  const jobId = (await h.jobs()).find((j) => j.filename === 'invoice-3.pdf')!.id;

  await waitFor(async () => (await agent.returns!.store.job(jobId)) !== undefined);
  expect(await agent.returns!.store.job(jobId)).toMatchObject({ done: false, polls: 0 });
  expect(h.clock.now()).toBe(startedAt);
  await agent.stop();
});
