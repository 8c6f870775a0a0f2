import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { transportError } from '../../src/api/errors.js';
import { JOURNAL_FILE } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { clientWith, type Harness, listFiles, makeHarness, makePdf, md5 } from './support/agent-harness.js';

const WINDOW_MS = 60_000;
let h: Harness;

beforeAll(async () => {
  h = await makeHarness({ uploadWindowMs: WINDOW_MS });
});
afterEach(async () => {
  await h.stopAgents();
});
afterAll(async () => {
  await h.cleanup();
});

const folder = () =>
  h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }], { shutdownGraceMs: 100 });

/** A client whose first single-file create reaches the service but whose answer is lost (reset). */
function losingFirstCreateAnswer() {
  let calls = 0;
  return clientWith(h.client, (real) => ({
    createSingleFile: async (request, opts) => {
      const created = await real.createSingleFile(request, opts);
      if (++calls === 1)
        throw transportError(
          Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
          'POST',
          '/jobs/single-file',
        );
      return created;
    },
  }));
}

async function jobsOf(content: Buffer) {
  const sha12 = createHash('sha256').update(content).digest('hex').slice(0, 12);
  return (await h.jobs()).filter((j) => j.name.includes(sha12));
}

async function itemOf(
  agent: { journal: { byPath(p: string): Promise<Array<{ state: string; attempt: number; id: number }>> } },
  name: string,
) {
  return (await agent.journal.byPath(path.join(h.folderPath('pdf'), name)))[0];
}

describe('exactly once across crashes and lost answers (real sandbox)', () => {
  it('recreates the job of a window that expired while the agent was down, and uploads the file once', async () => {
    const hang = clientWith(h.client, () => ({
      uploadFile: (_url, _file, opts) =>
        new Promise((_resolve, reject) =>
          opts?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
    }));
    const first = await h.startAgent(folder(), { client: hang });
    const pdf = await makePdf('expired window');
    h.drop('pdf', 'late.pdf', pdf);
    await waitFor(async () => (await itemOf(first, 'late.pdf'))?.state === 'created');
    expect((await first.stop()).drained).toBe(false);

    await h.advance(WINDOW_MS + 1000);
    const second = await h.startAgent(folder());
    await waitFor(async () => (await itemOf(second, 'late.pdf'))?.state === 'done');
    const item = (await itemOf(second, 'late.pdf'))!;
    expect(item.attempt).toBe(2);
    const uploaded = (await jobsOf(pdf)).filter((j) => j.uploadedMd5 !== null);
    expect(uploaded).toHaveLength(1);
    expect(uploaded[0]!.uploadedMd5).toBe(md5(pdf));
  });

  it('recreates the job when the files host refuses the upload as expired (403), and uploads once', async () => {
    let calls = 0;
    const expiring = clientWith(h.client, (real) => ({
      uploadFile: async (url, file, opts) => {
        if (++calls === 1) await h.advance(WINDOW_MS + 1000);
        return real.uploadFile(url, file, opts);
      },
    }));
    const agent = await h.startAgent(folder(), { client: expiring });
    const pdf = await makePdf('refused as expired');
    h.drop('pdf', 'expiring.pdf', pdf);
    await waitFor(async () => (await itemOf(agent, 'expiring.pdf'))?.state === 'done');
    expect((await itemOf(agent, 'expiring.pdf'))!.attempt).toBe(2);
    expect((await jobsOf(pdf)).filter((j) => j.uploadedMd5 === md5(pdf))).toHaveLength(1);
  });

  it('finds a job whose create answer was lost by its name, creates a new attempt, and only that one gets the file', async () => {
    const lossy = losingFirstCreateAnswer();
    const agent = await h.startAgent(folder(), { client: lossy });
    const pdf = await makePdf('lost create answer');
    h.drop('pdf', 'lost.pdf', pdf);
    await waitFor(async () => (await itemOf(agent, 'lost.pdf'))?.state === 'done');
    const jobs = await jobsOf(pdf);
    expect(jobs).toHaveLength(2);
    expect(jobs.filter((j) => j.uploadedMd5 === md5(pdf))).toHaveLength(1);
    expect(jobs.filter((j) => j.status === 'AWAITING_FILE_UPLOAD')).toHaveLength(1);
    expect(h.logs.some((l) => String(l['msg']).startsWith('job found by name'))).toBe(true);
  });

  it("looks a lost create up among the managed company's jobs, where the create went", async () => {
    const lossy = losingFirstCreateAnswer();
    const managed = h.config(
      [
        {
          name: 'managed',
          workflowId: SEED.workflows.managedPdfEmail,
          managedCompanyId: SEED.managedCompanyId,
        },
      ],
      { shutdownGraceMs: 100 },
    );
    const agent = await h.startAgent(managed, { client: lossy });
    h.drop('managed', 'lost-managed.pdf', await makePdf('lost create answer, managed company'));
    const item = async () =>
      (await agent.journal.byPath(path.join(h.folderPath('managed'), 'lost-managed.pdf')))[0];
    await waitFor(async () => (await item())?.state === 'done');
    const found = h.logs.find(
      (l) => String(l['msg']).startsWith('job found by name') && l['file'] === 'lost-managed.pdf',
    );
    expect(found).toBeDefined();
    // The lookup's own request lines carry the file too.
    expect(
      h.logs.some(
        (l) => l['msg'] === 'api request' && l['route'] === '/jobs' && l['file'] === 'lost-managed.pdf',
      ),
    ).toBe(true);
  });

  it('confirms an upload whose answer was lost through the job status after the 409 of the retry', async () => {
    let calls = 0;
    const lossy = clientWith(h.client, (real) => ({
      uploadFile: async (url, file, opts) => {
        const result = await real.uploadFile(url, file, opts);
        if (++calls === 1)
          throw transportError(
            Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
            'PUT',
            '{fileUploadUrl}',
          );
        return result;
      },
    }));
    const agent = await h.startAgent(folder(), { client: lossy });
    const pdf = await makePdf('lost upload answer');
    h.drop('pdf', 'landed.pdf', pdf);
    await waitFor(async () => (await itemOf(agent, 'landed.pdf'))?.state === 'done');
    const jobs = await jobsOf(pdf);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.uploadedMd5).toBe(md5(pdf));
    const history = await agent.journal.history((await itemOf(agent, 'landed.pdf'))!.id);
    expect(history.find((e) => e.to === 'uploaded')?.detail?.['note']).toMatch(/job status/);
  });

  it('refuses a file that changed after its claim instead of sending it half-changed', async () => {
    const changing = clientWith(h.client, (real) => ({
      createSingleFile: async (request, opts) => {
        appendFileSync(path.join(h.folderPath('pdf'), '.processing', 'changing.pdf'), 'more bytes');
        return real.createSingleFile(request, opts);
      },
    }));
    const agent = await h.startAgent(folder(), { client: changing });
    const pdf = await makePdf('changes after claim');
    h.drop('pdf', 'changing.pdf', pdf);
    const errorDir = path.join(h.dir, 'error', 'pdf');
    await waitFor(() => listFiles(errorDir).includes('changing.pdf'));
    const record = JSON.parse(readFileSync(path.join(errorDir, 'changing.pdf.error.json'), 'utf8'));
    expect(record.code).toBe('DOCEX_SOURCE_CHANGED');
    expect((await jobsOf(pdf)).every((j) => j.uploadedMd5 === null)).toBe(true);
    expect((await itemOf(agent, 'changing.pdf'))?.state).toBe('rejected');
  });

  it('takes back a file left in .processing that the journal never recorded', async () => {
    const pdf = await makePdf('moved in, then crashed');
    const processing = path.join(h.folderPath('pdf'), '.processing');
    mkdirSync(processing, { recursive: true });
    writeFileSync(path.join(processing, 'orphan.pdf'), pdf);
    const agent = await h.startAgent(folder());
    expect(agent.recovery.reclaimed).toBe(1);
    await waitFor(async () => (await itemOf(agent, 'orphan.pdf'))?.state === 'done');
    expect((await jobsOf(pdf)).filter((j) => j.uploadedMd5 === md5(pdf))).toHaveLength(1);
    expect(listFiles(processing)).toEqual([]);
  });

  it('moves a refused file still in .processing to the error folder at start (a crash after the refusal was recorded)', async () => {
    const pdf = await makePdf('refused, then crashed');
    const processing = path.join(h.folderPath('pdf'), '.processing');
    mkdirSync(processing, { recursive: true });
    const claimedPath = path.join(processing, 'refused.pdf');
    writeFileSync(claimedPath, pdf);
    const st = statSync(claimedPath);
    const journal = SqliteJournal.open(path.join(h.dir, 'state', JOURNAL_FILE), {
      clock: h.clock,
      log: silentLogger(),
    });
    const { item } = await journal.recordClaim({
      folder: 'pdf',
      sourcePath: path.join(h.folderPath('pdf'), 'refused.pdf'),
      claimedPath,
      fileName: 'refused.pdf',
      size: st.size,
      mtimeMs: st.mtimeMs,
      sha256: createHash('sha256').update(pdf).digest('hex'),
      workflowId: SEED.workflows.pdfEmail,
      mode: 'single-file',
    });
    await journal.transition(item.id, 'rejected', {
      code: 'DOCEX_INPUT_PDF_CORRUPT',
      reason: 'refused before the crash',
    });
    await journal.close();

    const agent = await h.startAgent(folder());
    expect(agent.recovery.placed).toBe(1);
    const errorDir = path.join(h.dir, 'error', 'pdf');
    const record = JSON.parse(readFileSync(path.join(errorDir, 'refused.pdf.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_PDF_CORRUPT', reason: 'refused before the crash' });
    expect(listFiles(processing)).toEqual([]);
    expect(await jobsOf(pdf)).toEqual([]);
  });
});
