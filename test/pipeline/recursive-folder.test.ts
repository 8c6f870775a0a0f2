/**
 * A recursive drop folder against the sandbox: files in sub-folders are routed by their path
 * relative to the drop folder, the journal records where they were dropped, and their archive and
 * error places keep the sub-path (a refused link too). A file a crash left in a sub-folder of
 * `.processing/` (moved in, never recorded) is found at the next start under its original path.
 * The sub-folders of `.processing/` go once their files have left.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, makePdf, type SandboxJob, useHarness } from './support/agent-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

const day = () => new Date(h.clock.now()).toISOString().slice(0, 10);

const tree = (extra: Record<string, unknown> = {}) =>
  h.config([
    {
      name: 'tree',
      workflowId: SEED.workflows.pdfEmail,
      recursive: { depth: 2 },
      routes: [
        {
          match: 'acme/invoices/*.pdf',
          workflowId: SEED.workflows.managedPdfEmail,
          managedCompanyId: SEED.managedCompanyId,
        },
        { match: '{company}/*.pdf', workflowId: SEED.workflows.managedPdfEmail },
        { match: '*/print/*.pdf', workflowId: SEED.workflows.pdfPrint },
      ],
      companies: { managed: SEED.managedCompanyId },
      ...extra,
    },
  ]);

const itemAt = async (agent: Agent, relative: string) =>
  (await agent.journal.byPath(path.join(h.folderPath('tree'), ...relative.split('/'))))[0];

const jobOf = async (filename: string) =>
  (await h.jobs()).filter((j) => j.filename === filename) as Array<SandboxJob & { companyId: string }>;

describe('a recursive folder (real sandbox, real files, real journal)', () => {
  it('routes files by their sub-path, records where they were dropped, and archives or refuses them under the same sub-path', async () => {
    const agent = await h.startAgent(tree());
    h.drop('tree', 'acme/invoices/inv-1.pdf', await makePdf('acme invoice'));
    h.drop('tree', 'MANAGED/letter.pdf', await makePdf('company by folder'));
    h.drop('tree', 'north/print/p.pdf', await makePdf('print'));
    h.drop('tree', 'stray.pdf', await makePdf('no route at the top'));
    h.drop('tree', 'north/other/x.pdf', await makePdf('no route below'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 3);

    expect(await jobOf('inv-1.pdf')).toEqual([
      expect.objectContaining({
        workflowId: SEED.workflows.managedPdfEmail,
        companyId: SEED.managedCompanyId,
      }),
    ]);
    expect(await jobOf('letter.pdf')).toEqual([
      expect.objectContaining({ companyId: SEED.managedCompanyId }),
    ]);
    expect(await jobOf('p.pdf')).toEqual([expect.objectContaining({ workflowId: SEED.workflows.pdfPrint })]);
    // The journal keeps the file's own name and where it was dropped.
    expect(await itemAt(agent, 'acme/invoices/inv-1.pdf')).toMatchObject({
      fileName: 'inv-1.pdf',
      state: 'done',
      sourcePath: path.join(h.folderPath('tree'), 'acme', 'invoices', 'inv-1.pdf'),
    });

    const archive = path.join(h.dir, 'archive', 'tree');
    expect(listFiles(archive)).toEqual(
      [
        `MANAGED/${day()}/letter.pdf`,
        `MANAGED/${day()}/letter.pdf.result.json`,
        `acme/invoices/${day()}/inv-1.pdf`,
        `acme/invoices/${day()}/inv-1.pdf.result.json`,
        `north/print/${day()}/p.pdf`,
        `north/print/${day()}/p.pdf.result.json`,
      ].map((p) => path.join(...p.split('/'))),
    );

    const error = path.join(h.dir, 'error', 'tree');
    await waitFor(() => listFiles(error).length === 6);
    expect(listFiles(error)).toEqual(
      [
        'north/other/x.pdf',
        'north/other/x.pdf.error.json',
        'north/other/x.pdf.error.txt',
        'stray.pdf',
        'stray.pdf.error.json',
        'stray.pdf.error.txt',
      ].map((p) => path.join(...p.split('/'))),
    );
    expect(readFileSync(path.join(error, 'north', 'other', 'x.pdf.error.txt'), 'utf8')).toContain(
      '"north/other/x.pdf" matches none of the folder\'s routes: tried "acme/invoices/*.pdf", "{company}/*.pdf", "*/print/*.pdf"',
    );
    // Nothing is left in the drop tree but the sub-folders, nor in .processing but its sub-folders.
    expect(listFiles(h.folderPath('tree'))).toEqual([]);
    await agent.stop();
  });

  it('refuses a link in a sub-folder into the same sub-path of the error folder, never following it', async () => {
    const outside = path.join(h.dir, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(path.join(outside, 'secret.pdf'), await makePdf('not to be sent'));
    mkdirSync(path.join(h.folderPath('tree'), 'acme'), { recursive: true });
    symlinkSync(outside, path.join(h.folderPath('tree'), 'acme', 'linked'));
    const agent = await h.startAgent(tree());
    const error = path.join(h.dir, 'error', 'tree', 'acme');
    await waitFor(() => listFiles(error).includes('linked.error.txt'));
    expect(readFileSync(path.join(error, 'linked.error.txt'), 'utf8')).toContain(
      '"acme/linked" is a symbolic link',
    );
    expect(await jobOf('secret.pdf')).toEqual([]);
    await agent.stop();
  });

  it('refuses a file whose sub-folder shares its name with a file refused before into the deepest folder that holds it, and keeps running', async () => {
    const agent = await h.startAgent(tree());
    const error = path.join(h.dir, 'error', 'tree');
    // `south`, a file at the top, is refused first (no route): error/tree/south is a file.
    h.drop('tree', 'south', await makePdf('a file named like a folder'));
    await waitFor(() => listFiles(error).includes('south.error.txt'));
    h.drop('tree', 'south/misc/z.pdf', await makePdf('no route, under south'));
    await waitFor(() => listFiles(error).includes('z.pdf.error.txt'));
    expect(readFileSync(path.join(error, 'z.pdf.error.txt'), 'utf8')).toContain(
      '"south/misc/z.pdf" matches none',
    );
    h.drop('tree', 'acme/invoices/after.pdf', await makePdf('still running'));
    await waitFor(async () => (await itemAt(agent, 'acme/invoices/after.pdf'))?.state === 'done');
    await agent.stop();
  });

  it('takes back a file a crash left in a sub-folder of .processing, under the path it was dropped at', async () => {
    const pdf = await makePdf('left mid-claim');
    const claimed = path.join(h.folderPath('tree'), '.processing', 'acme', 'invoices');
    mkdirSync(claimed, { recursive: true });
    writeFileSync(path.join(claimed, 'orphan.pdf'), pdf);
    const agent = await h.startAgent(tree());
    await waitFor(async () => (await itemAt(agent, 'acme/invoices/orphan.pdf'))?.state === 'done');
    expect(await itemAt(agent, 'acme/invoices/orphan.pdf')).toMatchObject({
      fileName: 'orphan.pdf',
      managedCompanyId: SEED.managedCompanyId,
      workflowId: SEED.workflows.managedPdfEmail,
    });
    expect(listFiles(path.join(h.dir, 'archive', 'tree', 'acme', 'invoices', day()))).toContain('orphan.pdf');
    // Its sub-folders of .processing went with it.
    await waitFor(() => !existsSync(path.join(h.folderPath('tree'), '.processing', 'acme')));
    await agent.stop();
  });

  it('removes the sub-folders of .processing its files leave empty (archived, refused, found empty at start), never the drop tree’s own, and claims into them again', async () => {
    const processing = path.join(h.folderPath('tree'), '.processing');
    // Left empty by an earlier agent (or a crash between a file's move and the removal).
    mkdirSync(path.join(processing, 'west', 'print'), { recursive: true });
    const agent = await h.startAgent(tree());
    const subFolders = () => readdirSync(processing).filter((n) => !n.startsWith('.'));
    await waitFor(() => subFolders().length === 0);
    h.drop('tree', 'acme/invoices/tidy-1.pdf', await makePdf('archived'));
    h.drop('tree', 'east/other/tidy-2.pdf', await makePdf('refused: no route'));
    await waitFor(async () => (await itemAt(agent, 'acme/invoices/tidy-1.pdf'))?.state === 'done');
    await waitFor(async () => (await itemAt(agent, 'east/other/tidy-2.pdf'))?.state === 'rejected');
    await waitFor(() => subFolders().length === 0);
    // The drop tree's sub-folders are the ERP's: they stay.
    expect(existsSync(path.join(h.folderPath('tree'), 'acme', 'invoices'))).toBe(true);
    expect(existsSync(path.join(h.folderPath('tree'), 'east', 'other'))).toBe(true);
    h.drop('tree', 'acme/invoices/tidy-3.pdf', await makePdf('claimed into acme/invoices again'));
    await waitFor(async () => (await itemAt(agent, 'acme/invoices/tidy-3.pdf'))?.state === 'done');
    await waitFor(() => subFolders().length === 0);
    await agent.stop();
  });
});
