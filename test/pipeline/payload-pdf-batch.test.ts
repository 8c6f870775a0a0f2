import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { folderTag } from '../../src/journal/index.js';
import { BATCH_WAIT_MS, isIndexName } from '../../src/pipeline/payload-pdf-batch.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';
import type { JobRecord } from '../../src/sandbox/records.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { clientWith, type Harness, listFiles, makeHarness, makePdf, md5 } from './support/agent-harness.js';

let h: Harness;
let pdfs: Buffer[];
beforeAll(async () => {
  h = await makeHarness();
  pdfs = await Promise.all(['one', 'two', 'three'].map((n) => makePdf(`Letter ${n}`)));
});
afterEach(async () => {
  await h.stopAgents();
});
afterAll(async () => {
  await h.cleanup();
});

const HEADER =
  'file;ADDRESS_COMPANY_NAME;ADDRESS_STREET;ADDRESS_STREET_NUMBER;ADDRESS_POSTAL_CODE;ADDRESS_CITY;' +
  'ADDRESS_COUNTRY_CODE;INVOICE_AMOUNT;INVOICE_DUE_DATE;INVOICE_COMMUNICATION;extra.customerId';
const row = (file: string, company: string, amount: string, country = 'BE') =>
  `${file};${company};Rue de la Loi;16;1000;Brussels;${country};${amount};2026-12-15;REF-${company};C-${company}`;
const NAMES = ['letters/a.pdf', 'letters/b.pdf', 'c.pdf'];

async function zipOf(entries: { name: string; data: Buffer | string }[]): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const e of entries) z.addBuffer(Buffer.from(e.data), e.name);
  z.end();
  const chunks: Buffer[] = [];
  for await (const chunk of z.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A batch of the three test PDFs; `rows` are index.csv's data lines in order. */
const batch = (rows: string[]) =>
  zipOf([
    { name: 'index.csv', data: `${[HEADER, ...rows].join('\r\n')}\r\n` },
    ...NAMES.map((name, i) => ({ name, data: pdfs[i]! })),
  ]);

let seq = 0;
const config = (folder: string, extra: Record<string, unknown> = {}) =>
  h.config([
    {
      name: folder,
      workflowId: SEED.workflows.payloadPdfPrint,
      mode: 'payload-pdf',
      payloadPdf: { pairing: 'index-csv' },
      allowDuplicates: true,
      ...extra,
    },
  ]);
const fresh = (prefix: string) => `${prefix}-${++seq}`;
const itemOf = async (
  agent: { journal: { byPath(p: string): Promise<Array<{ id: number; state: string }>> } },
  folder: string,
  name: string,
) => (await agent.journal.byPath(path.join(h.folderPath(folder), name)))[0];
const sandboxJob = (id: string | undefined) =>
  id ? h.sandbox.sandbox.ctx.store.get<JobRecord>('job', id) : undefined;
const day = () => new Date(h.clock.now()).toISOString().slice(0, 10);

describe('payload-pdf batches (ZIP with index.csv)', () => {
  it('turns a ZIP of 3 PDFs into 3 payload-pdf jobs with their own payloads and bytes, archived as one batch', async () => {
    const folder = fresh('batch');
    const agent = await h.startAgent(config(folder));
    h.drop(
      folder,
      'batch.zip',
      await batch([
        row(NAMES[0]!, 'Acme', '10.00'),
        row(NAMES[1]!, 'Beta', '20.00'),
        row(NAMES[2]!, 'Gamma', '30.00'),
      ]),
    );
    await waitFor(async () => (await itemOf(agent, folder, 'batch.zip'))?.state === 'done');
    const rows = await agent.journal.rowsOf((await itemOf(agent, folder, 'batch.zip'))!.id);
    expect(rows.map((r) => [r.label, r.state])).toEqual([
      ['letters/a.pdf (row 2)', 'done'],
      ['letters/b.pdf (row 3)', 'done'],
      ['c.pdf (row 4)', 'done'],
    ]);
    const jobs = rows.map((r) => sandboxJob(r.jobId)!);
    expect(jobs.map((j) => [j.filename, j.upload?.md5, j.kind])).toEqual([
      ['a.pdf', md5(pdfs[0]!), 'payload-pdf'],
      ['b.pdf', md5(pdfs[1]!), 'payload-pdf'],
      ['c.pdf', md5(pdfs[2]!), 'payload-pdf'],
    ]);
    expect(
      jobs.map((j) => j.payload?.channelIdentifiers.find((c) => c.kind === 'INVOICE_AMOUNT')?.value),
    ).toEqual(['10.00', '20.00', '30.00']);
    expect(jobs[1]!.payload?.extraInfoIdentifiers).toEqual([{ name: 'customerId', value: 'C-Beta' }]);
    // The control API agrees: each PDF uploaded once, to its own job.
    const uploaded = (await h.jobs()).filter((j) => rows.some((r) => r.jobId === j.id));
    expect(uploaded.map((j) => j.uploadedMd5).sort()).toEqual(pdfs.map((p) => md5(p)).sort());

    const archive = path.join(h.dir, 'archive', folder, day());
    expect(listFiles(archive)).toEqual(['batch.zip', 'batch.zip.result.json']);
    const result = JSON.parse(readFileSync(path.join(archive, 'batch.zip.result.json'), 'utf8'));
    expect(result.rows.map((r: { jobId: string }) => r.jobId)).toEqual(rows.map((r) => r.jobId));
    // Nothing left behind: no extracted PDF, no batch folder in .processing.
    expect(listFiles(h.folderPath(folder))).toEqual([]);
  });

  it('refuses the whole batch when one row breaks a payload rule, naming the row, before any job', async () => {
    const folder = fresh('bad');
    const agent = await h.startAgent(config(folder));
    const before = (await h.jobs()).length;
    // Row 3: a print address in a country code of three letters (rule 5, address fields).
    h.drop(
      folder,
      'batch.zip',
      await batch([
        row(NAMES[0]!, 'Acme', '10.00'),
        row(NAMES[1]!, 'Beta', '20.00', 'BEL'),
        row(NAMES[2]!, 'Gamma', '30.00'),
      ]),
    );
    const errorDir = path.join(h.dir, 'error', folder);
    // The data file is moved last, after its reason files are written: wait for it.
    await waitFor(() => listFiles(errorDir).includes('batch.zip'));
    expect(listFiles(errorDir)).toEqual(['batch.zip', 'batch.zip.error.json', 'batch.zip.error.txt']);
    const text = readFileSync(path.join(errorDir, 'batch.zip.error.txt'), 'utf8');
    expect(text).toMatch(/row 3 \[letters\/b\.pdf\]: rule \d+/);
    expect(text).not.toMatch(/row 2|row 4/);
    expect((await itemOf(agent, folder, 'batch.zip'))?.state).toBe('rejected');
    expect(JSON.parse(readFileSync(path.join(errorDir, 'batch.zip.error.json'), 'utf8')).code).toBe(
      'DOCEX_INPUT_ROWS_INVALID',
    );
    expect((await h.jobs()).length).toBe(before);
    expect(listFiles(h.folderPath(folder))).toEqual([]);
  });

  it('refuses a batch whose index.csv misses a PDF of the ZIP', async () => {
    const folder = fresh('unlisted');
    await h.startAgent(config(folder));
    const before = (await h.jobs()).length;
    h.drop(
      folder,
      'batch.zip',
      await batch([row(NAMES[0]!, 'Acme', '10.00'), row(NAMES[1]!, 'Beta', '20.00')]),
    );
    const errorDir = path.join(h.dir, 'error', folder);
    await waitFor(() => listFiles(errorDir).includes('batch.zip.error.txt'));
    const record = JSON.parse(readFileSync(path.join(errorDir, 'batch.zip.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_BATCH_INDEX' });
    expect(record.reason).toContain('"c.pdf"');
    expect((await h.jobs()).length).toBe(before);
  });

  it('onInvalidRow skip: sends the good rows, reports the bad one in the result, and archives the batch', async () => {
    const folder = fresh('skip');
    const agent = await h.startAgent(config(folder, { onInvalidRow: 'skip' }));
    h.drop(
      folder,
      'batch.zip',
      await batch([
        row(NAMES[0]!, 'Acme', '10.00'),
        row(NAMES[1]!, 'Beta', '20.00', 'BEL'),
        row(NAMES[2]!, 'Gamma', '30.00'),
      ]),
    );
    await waitFor(async () => (await itemOf(agent, folder, 'batch.zip'))?.state === 'done');
    const rows = await agent.journal.rowsOf((await itemOf(agent, folder, 'batch.zip'))!.id);
    expect(rows.map((r) => r.state)).toEqual(['done', 'rejected', 'done']);
    expect(rows[1]!.jobId).toBeUndefined();
    expect([sandboxJob(rows[0]!.jobId)?.upload?.md5, sandboxJob(rows[2]!.jobId)?.upload?.md5]).toEqual([
      md5(pdfs[0]!),
      md5(pdfs[2]!),
    ]);
    const result = JSON.parse(
      readFileSync(path.join(h.dir, 'archive', folder, day(), 'batch.zip.result.json'), 'utf8'),
    );
    expect(result.rows[1]).toMatchObject({ state: 'rejected', label: 'letters/b.pdf (row 3)' });
    expect(result.report).toMatch(/row 3 \[letters\/b\.pdf\]/);
  });

  it('a crash mid-batch (create answer lost on row 2, agent stopped) resumes without a second job for a finished row', async () => {
    const folder = fresh('crash');
    const cfg = config(folder);
    let creates = 0;
    const lossy = clientWith(h.client, (real) => ({
      createPayloadPdf: async (...args) => {
        creates++;
        const created = await real.createPayloadPdf(...args);
        // Row 2's job exists at the service, but the agent "dies" before it records the answer.
        if (creates === 2) throw new Error('connection reset after the request was sent');
        return created;
      },
    }));
    const first = await h.startAgent(cfg, { client: lossy, retryDelayMs: () => 60_000 });
    h.drop(
      folder,
      'batch.zip',
      await batch([
        row(NAMES[0]!, 'Acme', '10.00'),
        row(NAMES[1]!, 'Beta', '20.00'),
        row(NAMES[2]!, 'Gamma', '30.00'),
      ]),
    );
    const id = (await waitFor(async () => await itemOf(first, folder, 'batch.zip')))!.id;
    await waitFor(async () => creates === 2 && (await first.journal.rowsOf(id))[1]?.state === 'creating');
    const doneBefore = (await first.journal.rowsOf(id))[0]!;
    expect(doneBefore.state).toBe('done');
    await h.stopAgents();
    // The failed try's 60 s wait is kept in the journal: a restart continues it, so let it pass.
    await h.advance(60_000);

    const second = await h.startAgent(cfg);
    await waitFor(async () => (await second.journal.get(id))?.state === 'done');
    const rows = await second.journal.rowsOf(id);
    expect(rows.map((r) => r.state)).toEqual(['done', 'done', 'done']);
    expect(rows[0]!.jobId).toBe(doneBefore.jobId);
    // Exactly one uploaded job per PDF; row 2's orphan (created, answer lost) never got a file.
    const mine = (await h.jobs()).filter((j) => j.name.includes(`-${folderTag(folder)}-r`));
    const uploaded = mine.filter((j) => j.uploadedMd5 !== null);
    expect(uploaded.map((j) => j.uploadedMd5).sort()).toEqual(pdfs.map((p) => md5(p)).sort());
    expect(mine.filter((j) => j.uploadedMd5 === null)).toHaveLength(1);
    expect(listFiles(path.join(h.dir, 'archive', folder, day()))).toEqual([
      'batch.zip',
      'batch.zip.result.json',
    ]);
  });

  it('the committed sample (samples/payload-pdf-batch/batch.zip) passes the seeded workflow: 3 jobs', async () => {
    const folder = fresh('sample');
    const agent = await h.startAgent(config(folder));
    h.drop(folder, 'batch.zip', readFileSync('samples/payload-pdf-batch/batch.zip'));
    await waitFor(async () => (await itemOf(agent, folder, 'batch.zip'))?.state === 'done');
    const rows = await agent.journal.rowsOf((await itemOf(agent, folder, 'batch.zip'))!.id);
    expect(rows.map((r) => [r.state, sandboxJob(r.jobId)?.filename])).toEqual([
      ['done', 'letter-2026-0101.pdf'],
      ['done', 'letter-2026-0102.pdf'],
      ['done', 'letter-2026-0103.pdf'],
    ]);
  });

  it('a sidecar folder takes a ZIP batch too: the ZIP is self-describing', async () => {
    const folder = fresh('sidecar');
    const agent = await h.startAgent(config(folder, { payloadPdf: { pairing: 'sidecar' } }));
    h.drop(
      folder,
      'batch.zip',
      await batch([
        row(NAMES[0]!, 'Acme', '10.00'),
        row(NAMES[1]!, 'Beta', '20.00'),
        row(NAMES[2]!, 'Gamma', '30.00'),
      ]),
    );
    await waitFor(async () => (await itemOf(agent, folder, 'batch.zip'))?.state === 'done');
    const rows = await agent.journal.rowsOf((await itemOf(agent, folder, 'batch.zip'))!.id);
    expect(rows.map((r) => sandboxJob(r.jobId)?.upload?.md5)).toEqual(pdfs.map((p) => md5(p)));
  });

  it('refuses a loose JSON file in an index-csv folder with a reason that names what the folder takes', async () => {
    const folder = fresh('loose');
    await h.startAgent(config(folder));
    h.drop(folder, 'a.json', '{}');
    const errorDir = path.join(h.dir, 'error', folder);
    await waitFor(() => listFiles(errorDir).includes('a.json.error.json'));
    const record = JSON.parse(readFileSync(path.join(errorDir, 'a.json.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_WRONG_FOR_WORKFLOW' });
    expect(record.reason).toContain('index.csv');
  });
});

describe('isIndexName', () => {
  const runtime = (pairing: 'sidecar' | 'index-csv') =>
    ({ mode: 'payload-pdf', config: { payloadPdf: { pairing, indexFile: 'index.csv' } } }) as FolderRuntime;
  it('takes the configured index name and the numbered names a claim gives it, in index-csv folders only', () => {
    expect(
      ['index.csv', 'index.2.csv', 'index.x.csv', 'other.csv', 'index.csv.bak'].map((n) =>
        isIndexName(runtime('index-csv'), n),
      ),
    ).toEqual([true, true, false, false, false]);
    expect(isIndexName(runtime('sidecar'), 'index.csv')).toBe(false);
  });
});

describe('payload-pdf batches (folder drop: index.csv naming PDFs beside it)', () => {
  const FLAT = ['a.pdf', 'b.pdf', 'c.pdf'];
  const index = (rows: string[]) => `${[HEADER, ...rows].join('\r\n')}\r\n`;

  it('an index dropped before its PDFs waits for them, then sends one job per PDF and archives index and PDFs together', async () => {
    const folder = fresh('drop');
    const agent = await h.startAgent(config(folder));
    h.drop(
      folder,
      'index.csv',
      index([row('a.pdf', 'Acme', '10.00'), row('b.pdf', 'Beta', '20.00'), row('c.pdf', 'Gamma', '30.00')]),
    );
    await waitFor(() => h.logs.some((l) => l['code'] === 'DOCEX_BATCH_PENDING' && l['folder'] === folder));
    for (const [i, name] of FLAT.entries()) h.drop(folder, name, pdfs[i]!);
    await waitFor(async () => (await itemOf(agent, folder, 'index.csv'))?.state === 'done');
    const rows = await agent.journal.rowsOf((await itemOf(agent, folder, 'index.csv'))!.id);
    const jobs = rows.map((r) => sandboxJob(r.jobId)!);
    expect(jobs.map((j) => [j.filename, j.upload?.md5])).toEqual(FLAT.map((f, i) => [f, md5(pdfs[i]!)]));
    expect(jobs[2]!.payload?.channelIdentifiers.find((c) => c.kind === 'ADDRESS_COMPANY_NAME')?.value).toBe(
      'Gamma',
    );
    expect(listFiles(path.join(h.dir, 'archive', folder, day()))).toEqual([
      'a.pdf',
      'b.pdf',
      'c.pdf',
      'index.csv',
      'index.csv.result.json',
    ]);
    expect(listFiles(h.folderPath(folder))).toEqual([]);
  });

  it('a PDF named by the index that never arrives: after the wait the index and the PDFs that came go to error/, no job', async () => {
    const folder = fresh('missing');
    const agent = await h.startAgent(config(folder));
    const before = (await h.jobs()).length;
    h.drop(folder, 'a.pdf', pdfs[0]!);
    h.drop(folder, 'index.csv', index([row('a.pdf', 'Acme', '10.00'), row('zz.pdf', 'Beta', '20.00')]));
    await waitFor(() => h.logs.some((l) => l['code'] === 'DOCEX_BATCH_PENDING' && l['folder'] === folder));
    await h.advance(BATCH_WAIT_MS + 1000);
    const errorDir = path.join(h.dir, 'error', folder);
    const refused = ['a.pdf', 'index.csv', 'index.csv.error.json', 'index.csv.error.txt'];
    // The reason files are written before the files move: wait for all of them.
    await waitFor(() => refused.every((name) => listFiles(errorDir).includes(name)));
    expect(listFiles(errorDir)).toEqual(refused);
    expect(readFileSync(path.join(errorDir, 'index.csv.error.txt'), 'utf8')).toContain('"zz.pdf"');
    expect((await itemOf(agent, folder, 'index.csv'))?.state).toBe('rejected');
    expect((await h.jobs()).length).toBe(before);
    expect(listFiles(h.folderPath(folder))).toEqual([]);
  });

  it('a crash mid-batch resumes from the journal: the PDFs taken into the batch are found again, one upload each', async () => {
    const folder = fresh('dropcrash');
    const cfg = config(folder);
    let uploads = 0;
    const dying = clientWith(h.client, (real) => ({
      uploadFile: async (...args) => {
        // The agent "dies" before the second upload starts.
        if (++uploads === 2) throw new Error('connection reset');
        return real.uploadFile(...args);
      },
    }));
    const first = await h.startAgent(cfg, { client: dying, retryDelayMs: () => 60_000 });
    for (const [i, name] of FLAT.entries()) h.drop(folder, name, pdfs[i]!);
    h.drop(
      folder,
      'index.csv',
      index([row('a.pdf', 'Acme', '10.00'), row('b.pdf', 'Beta', '20.00'), row('c.pdf', 'Gamma', '30.00')]),
    );
    const id = (await waitFor(async () => await itemOf(first, folder, 'index.csv')))!.id;
    await waitFor(async () => uploads === 2 && (await first.journal.rowsOf(id))[1]?.state === 'created');
    const jobOfRow1 = (await first.journal.rowsOf(id))[0]!.jobId;
    await h.stopAgents();
    expect(listFiles(h.folderPath(folder)).filter((f) => f.endsWith('.pdf'))).toEqual(
      FLAT.map((f) => path.join('.processing', `.batch-${id}`, f)),
    );
    // The failed try's 60 s wait is kept in the journal: a restart continues it, so let it pass.
    await h.advance(60_000);

    const second = await h.startAgent(cfg);
    await waitFor(async () => (await second.journal.get(id))?.state === 'done');
    const rows = await second.journal.rowsOf(id);
    expect(rows[0]!.jobId).toBe(jobOfRow1);
    const mine = (await h.jobs()).filter((j) => j.name.includes(`-${folderTag(folder)}-r`));
    expect(mine.map((j) => j.uploadedMd5).sort()).toEqual(pdfs.map((p) => md5(p)).sort());
    expect(listFiles(path.join(h.dir, 'archive', folder, day()))).toHaveLength(5);
    expect(listFiles(h.folderPath(folder))).toEqual([]);
  });

  it('a PDF no index names stays in .processing, unsent', async () => {
    const folder = fresh('unnamed');
    const agent = await h.startAgent(config(folder));
    const before = (await h.jobs()).length;
    h.drop(folder, 'stray.pdf', pdfs[0]!);
    // Handed over by the source and set aside: not an item of its own.
    await waitFor(() =>
      h.logs.some((l) => l['folder'] === folder && l['msg'] === 'sidecar waits for its PDF'),
    );
    await agent.pipeline.idle();
    expect(listFiles(h.folderPath(folder))).toEqual([path.join('.processing', 'stray.pdf')]);
    expect((await h.jobs()).length).toBe(before);
    expect(listFiles(path.join(h.dir, 'error', folder))).toEqual([]);
  });
});
