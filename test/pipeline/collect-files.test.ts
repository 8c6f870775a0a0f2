/** The pipeline asks for a full GC once per so many files driven to their end (pipeline.ts COLLECT_EVERY_FILES). */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, makeHarness, makePdf } from './support/agent-harness.js';

const global = globalThis as { gc?: unknown };
const exposed = global.gc;
let h: Harness;
beforeAll(async () => {
  h = await makeHarness();
});
afterAll(async () => {
  await h.cleanup();
});
afterEach(() => {
  global.gc = exposed;
});

it('asks for one full GC per collectEveryFiles files finished, counting rejected files too', async () => {
  const majors: unknown[] = [];
  global.gc = (options: { type?: string }) => {
    if (options?.type === 'major') majors.push(options);
  };
  const agent = await h.startAgent(h.config([{ name: 'gc', workflowId: SEED.workflows.pdfEmail }]), {
    collectEveryFiles: 2,
  });
  for (let i = 0; i < 4; i++) h.drop('gc', `g-${i}.pdf`, await makePdf(`gc ${i}`));
  h.drop('gc', 'broken.pdf', Buffer.from('not a pdf'));
  await waitFor(async () => {
    const { files } = await agent.journal.stats();
    return files.done === 4 && files.rejected === 1;
  }, 20_000);
  expect(majors).toEqual([
    { type: 'major', execution: 'sync' },
    { type: 'major', execution: 'sync' },
  ]);
});
