/**
 * A folder's routes against the sandbox: files of one folder go to the workflow and managed
 * company of the first route their name matches, a file no route takes is refused into the error
 * folder, and the route recorded at the claim is the one a restart sends with.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { claimFile } from '../../src/sources/local/claim.js';
import { waitFor } from '../support/wait-for.js';
import {
  type Harness,
  listFiles,
  makePdf,
  md5,
  type SandboxJob,
  useHarness,
} from './support/agent-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

const ROUTES = [
  {
    match: '*-managed.pdf',
    workflowId: SEED.workflows.managedPdfEmail,
    managedCompanyId: SEED.managedCompanyId,
  },
  { match: '*-print.pdf', workflowId: SEED.workflows.pdfPrint },
];

const fileItem = async (agent: Agent, name: string) =>
  (await agent.journal.byPath(path.join(h.folderPath('mixed'), name)))[0];

/** The sandbox's job of a file, with the company it was created for. */
const jobOf = async (filename: string) =>
  (await h.jobs()).filter((j) => j.filename === filename) as Array<SandboxJob & { companyId: string }>;

describe('routes of a folder (real sandbox, real files, real journal)', () => {
  it('sends two files of one folder to two workflows and companies, and refuses the file no route takes, listing the routes', async () => {
    const agent = await h.startAgent(
      h.config([{ name: 'mixed', workflowId: SEED.workflows.pdfEmail, routes: ROUTES }]),
    );
    h.drop('mixed', 'a-managed.pdf', await makePdf('managed'));
    h.drop('mixed', 'b-print.pdf', await makePdf('print'));
    h.drop('mixed', 'c-other.pdf', await makePdf('other'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 2);

    expect(await jobOf('a-managed.pdf')).toEqual([
      expect.objectContaining({
        workflowId: SEED.workflows.managedPdfEmail,
        companyId: SEED.managedCompanyId,
      }),
    ]);
    expect(await jobOf('b-print.pdf')).toEqual([
      expect.objectContaining({ workflowId: SEED.workflows.pdfPrint, companyId: SEED.partnerCompanyId }),
    ]);
    expect(await fileItem(agent, 'a-managed.pdf')).toMatchObject({
      workflowId: SEED.workflows.managedPdfEmail,
      managedCompanyId: SEED.managedCompanyId,
    });

    const errorDir = path.join(h.dir, 'error', 'mixed');
    await waitFor(() => listFiles(errorDir).includes('c-other.pdf'));
    expect(listFiles(errorDir)).toEqual(['c-other.pdf', 'c-other.pdf.error.json', 'c-other.pdf.error.txt']);
    const text = readFileSync(path.join(errorDir, 'c-other.pdf.error.txt'), 'utf8');
    expect(text).toContain(
      '"c-other.pdf" matches none of the folder\'s routes: tried "*-managed.pdf", "*-print.pdf"',
    );
    const record = JSON.parse(readFileSync(path.join(errorDir, 'c-other.pdf.error.json'), 'utf8'));
    expect(record.code).toBe('DOCEX_INPUT_NO_ROUTE');
    expect(await fileItem(agent, 'c-other.pdf')).toMatchObject({
      state: 'rejected',
      rejectCode: 'DOCEX_INPUT_NO_ROUTE',
    });
    expect(await jobOf('c-other.pdf')).toEqual([]);
    await agent.stop();
  });

  it('names the company in the file name through the companies table, and refuses an unknown or __proto__ company naming the known ones', async () => {
    const agent = await h.startAgent(
      h.config([
        {
          name: 'mixed',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '{company}-*.pdf', workflowId: SEED.workflows.managedPdfEmail }],
          companies: { managed: SEED.managedCompanyId },
        },
      ]),
    );
    h.drop('mixed', 'MANAGED-invoice.pdf', await makePdf('managed by name'));
    h.drop('mixed', 'acme-invoice.pdf', await makePdf('unknown company'));
    h.drop('mixed', '__proto__-invoice.pdf', await makePdf('prototype company'));
    await waitFor(async () => (await fileItem(agent, 'MANAGED-invoice.pdf'))?.state === 'done');
    expect(await jobOf('MANAGED-invoice.pdf')).toEqual([
      expect.objectContaining({
        workflowId: SEED.workflows.managedPdfEmail,
        companyId: SEED.managedCompanyId,
      }),
    ]);
    const errorDir = path.join(h.dir, 'error', 'mixed');
    for (const [file, company] of [
      ['acme-invoice.pdf', 'acme'],
      ['__proto__-invoice.pdf', '__proto__'],
    ] as const) {
      await waitFor(() => listFiles(errorDir).includes(file));
      expect(readFileSync(path.join(errorDir, `${file}.error.txt`), 'utf8')).toContain(
        `"${file}" names company "${company}" (route "{company}-*.pdf"), which is not in the folder's companies table: known companies are "managed"`,
      );
      expect(await jobOf(file)).toEqual([]);
    }
    await agent.stop();
  });

  it("sends the files of two companies through one {company} route, each as its company to its company's own workflow", async () => {
    const agent = await h.startAgent(
      h.config([
        {
          name: 'companies',
          workflowId: SEED.workflows.pdfEmail,
          // The route's workflow is cmp_managed's: the entry that names none (acme) takes it.
          routes: [{ match: '{company}-*.pdf', workflowId: SEED.workflows.managedPdfEmail }],
          companies: {
            acme: SEED.managedCompanyId,
            globex: {
              managedCompanyId: SEED.secondManagedCompanyId,
              workflowId: SEED.workflows.secondManagedPdfEmail,
            },
          },
        },
      ]),
    );
    const sent = [
      ['acme-1.pdf', SEED.workflows.managedPdfEmail, SEED.managedCompanyId],
      ['Globex-1.pdf', SEED.workflows.secondManagedPdfEmail, SEED.secondManagedCompanyId],
      ['acme-2.pdf', SEED.workflows.managedPdfEmail, SEED.managedCompanyId],
      ['globex-2.pdf', SEED.workflows.secondManagedPdfEmail, SEED.secondManagedCompanyId],
    ] as const;
    for (const [file] of sent) h.drop('companies', file, await makePdf(file));
    const item = async (name: string) =>
      (await agent.journal.byPath(path.join(h.folderPath('companies'), name)))[0];
    for (const [file, workflowId, companyId] of sent) {
      await waitFor(async () => (await item(file))?.state === 'done');
      // The sandbox's record of the job: created in that workflow, as that company.
      expect(
        (await jobOf(file)).map((j) => [j.workflowId, j.companyId]),
        file,
      ).toEqual([[workflowId, companyId]]);
      expect(await item(file), file).toMatchObject({ workflowId, managedCompanyId: companyId });
    }
    await agent.stop();
  });

  it('sends the same bytes through two routes as two companies, not refused as a duplicate; the same company again is', async () => {
    const agent = await h.startAgent(
      h.config([{ name: 'same-bytes', workflowId: SEED.workflows.pdfEmail, routes: ROUTES }]),
    );
    const pdf = await makePdf('one form for everyone');
    const item = async (name: string) =>
      (await agent.journal.byPath(path.join(h.folderPath('same-bytes'), name)))[0];
    h.drop('same-bytes', 'form-managed.pdf', pdf);
    await waitFor(async () => (await item('form-managed.pdf'))?.state === 'done');
    h.drop('same-bytes', 'form-print.pdf', pdf);
    await waitFor(async () => (await item('form-print.pdf'))?.state === 'done');
    h.drop('same-bytes', 'again-managed.pdf', pdf);
    await waitFor(async () => (await item('again-managed.pdf'))?.state === 'rejected');
    expect(await item('again-managed.pdf')).toMatchObject({ rejectCode: 'DOCEX_DUPLICATE' });
    expect((await jobOf('form-managed.pdf')).map((j) => j.companyId)).toEqual([SEED.managedCompanyId]);
    expect((await jobOf('form-print.pdf')).map((j) => j.companyId)).toEqual([SEED.partnerCompanyId]);
    await agent.stop();
  });

  it('decides the route of a file claimed under a numbered name, its claim never recorded, from the name it was dropped with', async () => {
    // A crash left two drops of one name in .processing, neither recorded: the second claimed as
    // x-credit.2.pdf (the first was in flight), which no route takes by that name.
    const folder = h.folderPath('numbered');
    const processing = path.join(folder, '.processing');
    mkdirSync(folder, { recursive: true });
    const pdfs = [await makePdf('first credit note'), await makePdf('second credit note')];
    for (const pdf of pdfs) {
      const dropped = path.join(folder, 'x-credit.pdf');
      writeFileSync(dropped, pdf);
      const st = statSync(dropped);
      await claimFile(dropped, processing, { size: st.size, mtimeMs: st.mtimeMs });
    }
    expect(listFiles(processing)).toEqual([
      expect.stringMatching(/^\.names\/[0-9a-f]{64}\.json$/),
      'x-credit.2.pdf',
      'x-credit.pdf',
    ]);

    const agent = await h.startAgent(
      h.config([
        {
          name: 'numbered',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '*-credit.pdf', workflowId: SEED.workflows.pdfPrint }],
        },
      ]),
    );
    const dropped = path.join(folder, 'x-credit.pdf');
    await waitFor(
      async () => (await agent.journal.byPath(dropped)).filter((i) => i.state === 'done').length === 2,
    );
    const items = await agent.journal.byPath(dropped);
    expect(items.map((i) => [i.fileName, i.workflowId, i.state])).toEqual([
      ['x-credit.pdf', SEED.workflows.pdfPrint, 'done'],
      ['x-credit.pdf', SEED.workflows.pdfPrint, 'done'],
    ]);
    const jobs = (await h.jobs()).filter((j) => j.workflowId === SEED.workflows.pdfPrint);
    expect(
      jobs
        .filter((j) => j.filename === 'x-credit.pdf')
        .map((j) => j.uploadedMd5)
        .sort(),
    ).toEqual(pdfs.map((pdf) => md5(pdf)).sort());
    // The journal has the dropped name: the claim's note is gone with the files.
    expect(listFiles(processing)).toEqual([]);
    await agent.stop();
  });

  it('sends a file after a restart with the workflow and company recorded at its claim, though the routes changed', async () => {
    // Today closed (its weekday left out): the file is taken and checked, no job is created.
    const today = ((new Date(h.clock.now()).getUTCDay() + 6) % 7) + 1;
    const names = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    const closed = {
      days: names.filter((_, i) => i + 1 !== today),
      from: '00:00',
      to: '24:00',
      timeZone: 'UTC',
    };
    const first = await h.startAgent(
      h.config([{ name: 'mixed', workflowId: SEED.workflows.pdfEmail, routes: ROUTES, window: closed }]),
    );
    h.drop('mixed', 'late-managed.pdf', await makePdf('late'));
    await waitFor(
      async () => (await fileItem(first, 'late-managed.pdf'))?.lastFailureCode === 'DOCEX_SEND_WINDOW_CLOSED',
    );
    expect(await fileItem(first, 'late-managed.pdf')).toMatchObject({
      state: 'validated',
      workflowId: SEED.workflows.managedPdfEmail,
      managedCompanyId: SEED.managedCompanyId,
    });
    expect(await jobOf('late-managed.pdf')).toEqual([]);
    await first.stop();

    // The configuration changed meanwhile: the same name now routes to the partner's print workflow.
    const changed = [{ match: '*-managed.pdf', workflowId: SEED.workflows.pdfPrint }];
    const second = await h.startAgent(
      h.config([{ name: 'mixed', workflowId: SEED.workflows.pdfEmail, routes: changed }]),
    );
    await waitFor(async () => (await fileItem(second, 'late-managed.pdf'))?.state === 'done');
    expect(await jobOf('late-managed.pdf')).toEqual([
      expect.objectContaining({
        workflowId: SEED.workflows.managedPdfEmail,
        companyId: SEED.managedCompanyId,
      }),
    ]);
    await second.stop();
  });
});
