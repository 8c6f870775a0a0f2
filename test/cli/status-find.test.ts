/**
 * `docex-agent status` finds a file by its bare name, its archived path and its job id, and shows
 * beside the journal history the job's sending events, their outcome and where the proofs went
 * (real sandbox, real journal and returns.sqlite, real archive).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusText } from '../../src/cli/status-runner.js';
import { JOURNAL_FILE } from '../../src/config/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, listFiles, makeHarness, makePdf } from '../pipeline/support/agent-harness.js';
import { day, finalWithProofs, proofDir, pump, returnsConfig } from '../returns/support/returns-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: Harness;
beforeAll(async () => {
  h = await makeHarness();
});
afterAll(async () => {
  await h.stopAgents();
  await h.cleanup();
});

describe('docex-agent status', () => {
  it('finds a file by bare name, archived path and job id, with its sending events and saved proofs', async () => {
    const config = h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], {
      returns: returnsConfig(h),
    });
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const claimedDay = day(h.clock.now());
    h.drop('pdf', 'valgrind.pdf', await makePdf('valgrind'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);
    await pump(h, () => finalWithProofs(h, `${claimedDay}/valgrind.pdf.status.json`));
    const jobId = (await h.jobs()).find((j) => j.filename === 'valgrind.pdf')!.id;
    await h.stopAgents();

    const journalFile = path.join(config.stateDir, JOURNAL_FILE);
    const returns = { stateDir: config.stateDir, proofsRoot: proofDir(h) };
    const archiveDir = agent.plan.running.get('pdf')!.config.archiveDir;
    const archived = path.join(archiveDir, listFiles(archiveDir).find((f) => f.endsWith('valgrind.pdf'))!);

    for (const query of ['valgrind.pdf', archived, jobId]) {
      const { found, text } = await statusText({ kind: 'sqlite', file: journalFile }, query, returns);
      expect(found, query).toBe(true);
      expect(text, query).toContain('valgrind.pdf  [done]');
      expect(text, query).toContain(`job ${jobId}`);
      expect(text, query).toMatch(/sending event \S+: \S+ \(\S+\), final /);
      for (const proof of listFiles(proofDir(h)))
        expect(text, query).toContain(`saved at ${path.join(proofDir(h), proof)}`);
    }
    expect(listFiles(proofDir(h)).length).toBe(2);
    expect(
      (await statusText({ kind: 'sqlite', file: journalFile }, 'never-dropped.pdf', returns)).found,
    ).toBe(false);
  });
});
