import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { SIDECAR_WAIT_MS } from '../../src/pipeline/payload-pdf.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, md5, useHarness } from './support/agent-harness.js';

let h: Harness;
// The same suite under both names profiles of the sandbox (specification and live reference).
describe.each(NAMES_PROFILES)('names profile %s', (names) => {
  useHarness({ names }, (made) => {
    h = made;
  });

  const pdf = readFileSync('samples/payload-pdf-print/letter-with-payment.pdf');
  const sidecar = JSON.parse(readFileSync('samples/payload-pdf-print/letter-with-payment.json', 'utf8'));
  const config = () =>
    h.config([
      {
        name: 'letters',
        workflowId: SEED.workflows.payloadPdfPrint,
        mode: 'payload-pdf',
        allowDuplicates: true,
      },
    ]);
  const itemOf = async (
    agent: { journal: { byPath(p: string): Promise<Array<{ id: number; state: string }>> } },
    name: string,
  ) => (await agent.journal.byPath(path.join(h.folderPath('letters'), name)))[0];

  describe('payload-pdf folders (PDF + sidecar)', () => {
    it('creates a payload-pdf job from the sidecar, uploads the PDF, and archives both, even when the sidecar comes later', async () => {
      const agent = await h.startAgent(config());
      h.drop('letters', 'letter-a.pdf', pdf);
      await waitFor(async () => (await itemOf(agent, 'letter-a.pdf'))?.state === 'validated');
      h.drop('letters', 'letter-a.json', JSON.stringify({ ...sidecar, filename: 'letter-a.pdf' }));
      await waitFor(async () => (await itemOf(agent, 'letter-a.pdf'))?.state === 'done');
      const row = (await agent.journal.rowsOf((await itemOf(agent, 'letter-a.pdf'))!.id))[0]!;
      const job = (await h.jobs()).find((j) => j.id === row.jobId);
      expect(job).toMatchObject({ uploadedMd5: md5(pdf), filename: 'letter-a.pdf' });
      const day = new Date(h.clock.now()).toISOString().slice(0, 10);
      expect(listFiles(path.join(h.dir, 'archive', 'letters', day))).toEqual([
        'letter-a.json',
        'letter-a.pdf',
        'letter-a.pdf.result.json',
      ]);
      expect(listFiles(h.folderPath('letters'))).toEqual([]);
    });

    it('refuses a sidecar whose PDF never comes, after the sidecar wait, into the error folder with its reason', async () => {
      const agent = await h.startAgent(config());
      h.drop('letters', 'alone.json', JSON.stringify({ ...sidecar, filename: 'alone.pdf' }));
      const processing = path.join(h.folderPath('letters'), '.processing');
      // Watched from the moment it is accepted, just after it lands in .processing: only then may
      // the clock move, or the wait would count from the moved clock.
      await waitFor(() => agent.pipeline.tracked().waiting === 1);
      expect(listFiles(processing)).toContain('alone.json');
      h.clock.advance(SIDECAR_WAIT_MS + 1_000);
      const errorDir = path.join(h.dir, 'error', 'letters');
      // The records are written first, then the sidecar is moved beside them.
      await waitFor(() => listFiles(errorDir).includes('alone.json'));
      expect(listFiles(processing)).not.toContain('alone.json');
      const record = JSON.parse(readFileSync(path.join(errorDir, 'alone.json.error.json'), 'utf8'));
      expect(record).toMatchObject({ code: 'DOCEX_INPUT_SIDECAR_ORPHAN', file: 'alone.json' });
      expect(readFileSync(path.join(errorDir, 'alone.json.error.txt'), 'utf8')).toContain('did not arrive');
    });

    it('refuses a PDF whose sidecar breaks a payload rule, with the rule in the report, before any job', async () => {
      const agent = await h.startAgent(config());
      const before = (await h.jobs()).length;
      const bad = {
        ...sidecar,
        filename: 'letter-b.pdf',
        payload: { ...sidecar.payload, channelIdentifiers: [] },
      };
      h.drop('letters', 'letter-b.json', JSON.stringify(bad));
      h.drop('letters', 'letter-b.pdf', pdf);
      const errorDir = path.join(h.dir, 'error', 'letters');
      await waitFor(() => listFiles(errorDir).includes('letter-b.pdf.error.txt'));
      expect(listFiles(errorDir)).toContain('letter-b.json');
      expect(readFileSync(path.join(errorDir, 'letter-b.pdf.error.txt'), 'utf8')).toMatch(/rule \d+/);
      expect((await itemOf(agent, 'letter-b.pdf'))?.state).toBe('rejected');
      expect((await h.jobs()).length).toBe(before);
    });
  });
});
