import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, makePdf, md5, useHarness } from './support/agent-harness.js';

let h: Harness;

// The same suite under both names profiles of the sandbox (specification and live reference).
describe.each(NAMES_PROFILES)('names profile %s', (names) => {
  useHarness({ names }, (made) => {
    h = made;
  });

  describe('single-file folders end to end (real sandbox, real files, real journal)', () => {
    it('turns a dropped PDF into one uploaded job and archives it with its result record', async () => {
      const agent = await h.startAgent(h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }]));
      const pdf = await makePdf('invoice 1');
      h.drop('pdf', 'invoice-1.pdf', pdf);

      const day = new Date(h.clock.now()).toISOString().slice(0, 10);
      const archived = path.join(h.dir, 'archive', 'pdf', day, 'invoice-1.pdf');
      await waitFor(() => listFiles(path.dirname(archived)).includes('invoice-1.pdf.result.json'));
      await waitFor(async () => (await agent.journal.stats()).files.done === 1);

      expect(readFileSync(archived)).toEqual(pdf);
      const result = JSON.parse(readFileSync(`${archived}.result.json`, 'utf8'));
      const jobs = (await h.jobs()).filter((j) => j.id === result.jobId);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({
        uploadedMd5: md5(pdf),
        uploadedSize: pdf.length,
        filename: 'invoice-1.pdf',
      });
      expect(result).toMatchObject({
        status: 'uploaded',
        file: 'invoice-1.pdf',
        folder: 'pdf',
        workflowId: SEED.workflows.pdfEmail,
        size: pdf.length,
        md5: md5(pdf),
      });
      expect(result.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(jobs[0]!.name).toContain(result.sha256.slice(0, 12));
      // Nothing left behind in the drop folder or in flight.
      expect(listFiles(h.folderPath('pdf'))).toEqual([]);
      // The upload URL left the journal once the upload was confirmed.
      const item = (await agent.journal.byJobId(result.jobId))!;
      expect(item.state).toBe('done');
      expect(await agent.journal.revealUploadUrl(item.id)).toBeUndefined();
      await agent.stop();
    });

    it('sends a fresh small file with one create and one PUT, its claim, checks and intent in one commit', async () => {
      const agent = await h.startAgent(h.config([{ name: 'fresh', workflowId: SEED.workflows.pdfEmail }]));
      h.drop('fresh', 'fresh.pdf', await makePdf('fresh'));
      const item = async () => (await agent.journal.byPath(path.join(h.folderPath('fresh'), 'fresh.pdf')))[0];
      await waitFor(async () => (await item())?.state === 'done');
      const history = await agent.journal.history((await item())!.id);
      expect(history.map((e) => e.to)).toEqual([
        'claimed',
        'validated',
        'creating',
        'created',
        'uploaded',
        'done',
      ]);
      expect(new Set(history.slice(0, 3).map((e) => e.at)).size).toBe(1);
      // No lookup by name: this process recorded the intent and knows nothing was sent before.
      const calls = h.logs
        .filter((l) => l['msg'] === 'api request' && l['file'] === 'fresh.pdf')
        .map((l) => `${l['method']} ${l['route']}`);
      expect(calls).toEqual(['POST /jobs/single-file', 'PUT {fileUploadUrl}']);
    });

    it('names the folder and the file at most once on every log line', async () => {
      const agent = await h.startAgent(h.config([{ name: 'once', workflowId: SEED.workflows.pdfEmail }]));
      h.drop('once', 'once.pdf', await makePdf('once'));
      await waitFor(
        async () =>
          (await agent.journal.byPath(path.join(h.folderPath('once'), 'once.pdf')))[0]?.state === 'done',
      );
      const mine = h.lines.filter((l) => l.includes('"once"'));
      expect(mine.length).toBeGreaterThan(3);
      const twice = mine.filter((l) => /"folder":.*"folder":|"file":.*"file":/.test(l));
      expect(twice).toEqual([]);
    });

    it("writes the API client's own lines (create, upload) with the file, folder and job fields", async () => {
      const agent = await h.startAgent(h.config([{ name: 'traced', workflowId: SEED.workflows.pdfEmail }]));
      h.drop('traced', 'traced.pdf', await makePdf('traced'));
      const uploadedLine = () =>
        h.logs.find((l) => l['msg'] === 'file uploaded' && l['file'] === 'traced.pdf');
      await waitFor(() => uploadedLine() !== undefined);
      await waitFor(
        async () =>
          (await agent.journal.byPath(path.join(h.folderPath('traced'), 'traced.pdf')))[0]?.state === 'done',
      );
      const uploaded = uploadedLine();
      expect(uploaded).toMatchObject({ folder: 'traced', file: 'traced.pdf', jobId: expect.any(String) });
    });

    it('refuses a corrupt PDF into the error folder with .error.json and .error.txt, creating no job', async () => {
      const agent = await h.startAgent(h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }]));
      const before = (await h.jobs()).length;
      h.drop('pdf', 'broken.pdf', '%PDF-1.7\nthis is not a pdf body');
      const errorDir = path.join(h.dir, 'error', 'pdf');
      await waitFor(() => listFiles(errorDir).includes('broken.pdf'));
      const record = JSON.parse(readFileSync(path.join(errorDir, 'broken.pdf.error.json'), 'utf8'));
      expect(record).toMatchObject({ status: 'rejected', file: 'broken.pdf', folder: 'pdf' });
      expect(record.code).toMatch(/^DOCEX_INPUT_PDF_/);
      const text = readFileSync(path.join(errorDir, 'broken.pdf.error.txt'), 'utf8');
      expect(text).toContain('broken.pdf was not sent.');
      expect(text).toContain(record.code);
      expect(await h.jobs()).toHaveLength(before);
      await agent.stop();
    });

    it('refuses the same content dropped again as a duplicate, naming the earlier file', async () => {
      const agent = await h.startAgent(h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }]));
      const pdf = await makePdf('duplicate me');
      h.drop('pdf', 'first.pdf', pdf);
      await waitFor(
        async () =>
          (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'first.pdf')))[0]?.state === 'done',
      );
      h.drop('pdf', 'again.pdf', pdf);
      const errorDir = path.join(h.dir, 'error', 'pdf');
      await waitFor(() => listFiles(errorDir).includes('again.pdf'));
      const record = JSON.parse(readFileSync(path.join(errorDir, 'again.pdf.error.json'), 'utf8'));
      expect(record.code).toBe('DOCEX_DUPLICATE');
      expect(record.reason).toContain('first.pdf');
      expect((await h.jobs()).filter((j) => j.uploadedMd5 === md5(pdf))).toHaveLength(1);
      await agent.stop();
    });

    it('sends the same content again when the folder allows duplicates', async () => {
      const agent = await h.startAgent(
        h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail, allowDuplicates: true }]),
      );
      const pdf = await makePdf('allowed twice');
      h.drop('pdf', 'one.pdf', pdf);
      await waitFor(
        async () =>
          (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'one.pdf')))[0]?.state === 'done',
      );
      h.drop('pdf', 'two.pdf', pdf);
      await waitFor(
        async () =>
          (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'two.pdf')))[0]?.state === 'done',
      );
      expect((await h.jobs()).filter((j) => j.uploadedMd5 === md5(pdf))).toHaveLength(2);
      await agent.stop();
    });

    it('stops a folder whose workflow is disabled, not validated or missing, and runs the others', async () => {
      const agent = await h.startAgent(
        h.config([
          { name: 'off', workflowId: SEED.workflows.disabled },
          { name: 'unvalidated', workflowId: SEED.workflows.notValidated },
          { name: 'missing', workflowId: 'wf_does_not_exist' },
          { name: 'wrong-mode', workflowId: SEED.workflows.pdfEmail, mode: 'payload-word' },
          { name: 'good', workflowId: SEED.workflows.pdfPrint },
        ]),
      );
      expect([...agent.plan.running.keys()]).toEqual(['good']);
      const stopped = Object.fromEntries(agent.stoppedFolders.map((s) => [s.name, s]));
      expect(stopped['off']?.reason).toMatch(/disabled/);
      expect(stopped['unvalidated']?.reason).toMatch(/not validated/);
      expect(stopped['missing']?.reason).toMatch(/does not exist/);
      expect(stopped['wrong-mode']?.reason).toMatch(/does not fit/);
      expect(agent.stoppedFolders.every((s) => s.code === 'DOCEX_FOLDER_WORKFLOW')).toBe(true);
      expect(h.logs.some((l) => l['msg'] === 'folder stopped' && l['folder'] === 'off')).toBe(true);
      await agent.stop();
    });
  });
});
