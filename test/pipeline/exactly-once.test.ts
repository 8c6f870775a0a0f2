/**
 * Exactly once per document when answers are lost: the sandbox does the work and cuts the
 * connection before its answer (dropAnswer), or the agent fails on its own after the call. Every
 * mode must end with one job per document and the file archived; the lookup by job name is what
 * stands between a lost answer and a second letter.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { clientWith, type Harness, listFiles, makeHarness, makePdf, md5 } from './support/agent-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.stopAgents();
  await h.sandbox.control('DELETE', '/faults');
});
afterAll(async () => {
  await h.cleanup();
});

const state = async (
  agent: { journal: { byPath(p: string): Promise<Array<{ state: string }>> } },
  folder: string,
  name: string,
) => (await agent.journal.byPath(path.join(h.folderPath(folder), name)))[0]?.state;
const jobsNamed = async (part: string) => (await h.jobs()).filter((j) => j.name.startsWith(part));
const dropAnswers = (route: string, method: string, next: number) =>
  h.sandbox.control('POST', '/faults', { route, method, dropAnswerNext: next });

describe('a lost answer never becomes a second job', () => {
  it('payload-word: rows whose create answers were lost are found by name; one job per row', async () => {
    const config = h.config([
      { name: 'word-lost', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    ]);
    await dropAnswers('/jobs/payload-word', 'POST', 2);
    const agent = await h.startAgent(config);
    h.drop('word-lost', 'lost.csv', 'EMAIL_ADDRESS\r\na@example.com\r\nb@example.com\r\nc@example.com\r\n');
    await waitFor(async () => (await state(agent, 'word-lost', 'lost.csv')) === 'done');
    const jobs = await jobsNamed('lost.csv');
    expect(jobs).toHaveLength(3);
    expect(new Set(jobs.map((j) => j.name)).size).toBe(3);
    expect(h.logs.filter((l) => l['msg'] === 'row job found by name').length).toBeGreaterThanOrEqual(2);
  });

  it('single-file: a lost create answer and a lost upload answer end in one uploaded job', async () => {
    const config = h.config([{ name: 'pdf-lost', workflowId: SEED.workflows.pdfEmail }]);
    await dropAnswers('/jobs/single-file', 'POST', 1);
    await dropAnswers('/upload/:jobId', 'PUT', 1);
    const agent = await h.startAgent(config);
    const pdf = await makePdf('lost answers');
    h.drop('pdf-lost', 'lost.pdf', pdf);
    await waitFor(async () => (await state(agent, 'pdf-lost', 'lost.pdf')) === 'done');
    const uploaded = (await jobsNamed('lost.pdf')).filter((j) => j.uploadedMd5 !== null);
    expect(uploaded.map((j) => j.uploadedMd5)).toEqual([md5(pdf)]);
  });

  it('single-file: six create answers lost in a row (past the five upload-window attempts) still end in one uploaded job', async () => {
    const config = h.config([{ name: 'pdf-unanswered', workflowId: SEED.workflows.pdfEmail }]);
    await dropAnswers('/jobs/single-file', 'POST', 6);
    const agent = await h.startAgent(config);
    const pdf = await makePdf('six lost create answers');
    h.drop('pdf-unanswered', 'unanswered.pdf', pdf);
    await waitFor(async () => (await state(agent, 'pdf-unanswered', 'unanswered.pdf')) === 'done', 30_000);
    const jobs = await jobsNamed('unanswered.pdf');
    // Six orphans (found by name, never uploaded, left to expire) and the one that holds the file.
    expect(jobs).toHaveLength(7);
    expect(jobs.filter((j) => j.uploadedMd5 !== null).map((j) => j.uploadedMd5)).toEqual([md5(pdf)]);
  });

  it('payload-pdf: a PDF whose create answer was lost is uploaded to one job only', async () => {
    const config = h.config([
      {
        name: 'sidecar-lost',
        workflowId: SEED.workflows.payloadPdfPrint,
        mode: 'payload-pdf',
        payloadPdf: { pairing: 'sidecar', sidecarExtension: '.json' },
      },
    ]);
    await dropAnswers('/jobs/payload-pdf', 'POST', 1);
    const agent = await h.startAgent(config);
    const pdf = await makePdf('sidecar lost');
    h.drop('sidecar-lost', 'letter.json', readFileSync('samples/payload-pdf-print/letter-with-payment.json'));
    h.drop('sidecar-lost', 'letter.pdf', pdf);
    await waitFor(async () => (await state(agent, 'sidecar-lost', 'letter.pdf')) === 'done');
    const uploaded = (await h.jobs()).filter((j) => j.uploadedMd5 === md5(pdf));
    expect(uploaded).toHaveLength(1);
  });

  it('an error of the agent after the call (a bug, an unexpected answer) never repeats the call', async () => {
    let failures = 0;
    const buggy = clientWith(h.client, (real) => ({
      createPayloadWord: async (request, opts) => {
        const created = await real.createPayloadWord(request, opts);
        if (failures++ < 2) throw new Error('a bug after the call');
        return created;
      },
    }));
    const config = h.config([
      { name: 'word-bug', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    ]);
    const agent = await h.startAgent(config, { client: buggy });
    h.drop('word-bug', 'bug.csv', 'EMAIL_ADDRESS\r\nx@example.com\r\ny@example.com\r\n');
    await waitFor(async () => (await state(agent, 'word-bug', 'bug.csv')) === 'done');
    expect(await jobsNamed('bug.csv')).toHaveLength(2);
  });
});

describe('parking: a file the agent keeps failing on leaves .processing with what became of each row', () => {
  it('parks a payload-word file after three internal failures in a row, listing sent, maybe sent and unsent rows, with the unsent rows ready to drop again', async () => {
    let calls = 0;
    const failing = clientWith(h.client, (real) => ({
      // Row 1's create always fails on our side, before anything is sent.
      createPayloadWord: async (request, opts) => {
        calls++;
        if (request.jobName?.includes('-r1')) throw new Error('a bug before the call');
        return real.createPayloadWord(request, opts);
      },
    }));
    const config = h.config([
      { name: 'word-park', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    ]);
    const agent = await h.startAgent(config, { client: failing });
    h.drop(
      'word-park',
      'park.csv',
      'EMAIL_ADDRESS\r\nsent@example.com\r\nstuck@example.com\r\nlater@example.com\r\n',
    );
    await waitFor(async () => (await state(agent, 'word-park', 'park.csv')) === 'rejected');
    const errorDir = path.join(h.dir, 'error', 'word-park');
    // The data file is moved last, after every record beside it.
    await waitFor(() => listFiles(errorDir).includes('park.csv'));

    const jobs = await jobsNamed('park.csv');
    expect(jobs).toHaveLength(1);
    const record = JSON.parse(readFileSync(path.join(errorDir, 'park.csv.error.json'), 'utf8'));
    expect(record.code).toBe('DOCEX_PARKED');
    const text = readFileSync(path.join(errorDir, 'park.csv.error.txt'), 'utf8');
    expect(text).toMatch(/^park\.csv was parked with part of it sent/);
    expect(text).toContain(`Already sent (do not send these again):\n  row 2: job ${jobs[0]!.id}`);
    expect(text).toMatch(
      /Maybe sent:\n {2}row 3: look up the job named park\.csv\.dx-[0-9a-f]+-[0-9a-f]+-r1/,
    );
    expect(text).toContain('Not sent:\n  row 4');
    const ready = JSON.parse(readFileSync(path.join(errorDir, 'park.csv.unsent.json'), 'utf8'));
    expect(
      ready.map(
        (r: { payload: { channelIdentifiers: { value: string }[] } }) =>
          r.payload.channelIdentifiers[0]!.value,
      ),
    ).toEqual(['later@example.com']);
    expect(h.logs.some((l) => l['msg'] === 'file parked in the error folder' && l['level'] === 50)).toBe(
      true,
    );
    // Three tries of row 1, each behind a lookup that found nothing; row 2 never reached.
    expect(calls).toBe(4);

    // The ready file, dropped again, sends exactly the rows that were not sent.
    h.drop('word-park', 'park-unsent.json', readFileSync(path.join(errorDir, 'park.csv.unsent.json')));
    await waitFor(async () => (await state(agent, 'word-park', 'park-unsent.json')) === 'done');
    expect(await jobsNamed('park-unsent.json')).toHaveLength(1);
  });

  it('keeps trying a payload-word file whose every try sends a row before failing, and sends each row once', async () => {
    // Each row's first create fails on our side, before anything is sent: every try sends one row,
    // then fails on the next. Tries that move a row forward are progress, not a failure in a row,
    // so the file is never parked however many rows it has.
    const failedOnce = new Set<string>();
    const flaky = clientWith(h.client, (real) => ({
      createPayloadWord: async (request, opts) => {
        const name = request.jobName ?? '';
        if (!name.endsWith('-r0') && !failedOnce.has(name)) {
          failedOnce.add(name);
          throw new Error('a bug before the call');
        }
        return real.createPayloadWord(request, opts);
      },
    }));
    const config = h.config([
      { name: 'word-progress', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
    ]);
    const agent = await h.startAgent(config, { client: flaky });
    const rows = Array.from({ length: 6 }, (_, i) => `row${i}@example.com`);
    h.drop('word-progress', 'steady.csv', `EMAIL_ADDRESS\r\n${rows.join('\r\n')}\r\n`);
    await waitFor(async () => {
      const s = await state(agent, 'word-progress', 'steady.csv');
      return s === 'done' || s === 'rejected';
    });
    expect(await state(agent, 'word-progress', 'steady.csv')).toBe('done');
    expect(failedOnce.size).toBe(5);
    const jobs = await jobsNamed('steady.csv');
    expect(jobs).toHaveLength(6);
    expect(new Set(jobs.map((j) => j.name)).size).toBe(6);
  });
});
