import { afterAll, beforeAll, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, makeHarness, makePdf } from './support/agent-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await makeHarness();
});
afterAll(async () => {
  await h.cleanup();
});

it('runs more uploads at once than EventTarget allows listeners by default, without a MaxListenersExceededWarning', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    // Held uploads: every slot has a request in flight on the pipeline's one abort signal.
    await h.sandbox.control('POST', '/faults', { route: '/upload/:jobId', method: 'PUT', latencyMs: 300 });
    const agent = await h.startAgent(
      h.config([{ name: 'wide', workflowId: SEED.workflows.pdfEmail, concurrency: 16 }], { concurrency: 16 }),
    );
    for (let i = 0; i < 24; i++) h.drop('wide', `w-${i}.pdf`, await makePdf(`wide ${i}`));
    await waitFor(async () => (await agent.journal.stats()).files.done === 24, 20_000);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  } finally {
    process.off('warning', onWarning);
    await h.sandbox.control('DELETE', '/faults');
  }
});
