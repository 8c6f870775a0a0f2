/**
 * The worked multi-company example of docs/configuration.md, run as written: the folder of
 * config/multi-company.yaml (its routes and companies table) against the sandbox, with its drop
 * tree. Each file lands in its company and workflow, the unknown company and the file no route
 * takes are refused with the reasons the page quotes, and the archive, status and proof paths are
 * the ones the page shows.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import {
  day,
  finalWithProofs,
  proofDir,
  pump,
  returnsConfig,
  statusDir,
} from '../returns/support/returns-harness.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, makePdf, type SandboxJob, useHarness } from './support/agent-harness.js';

const root = path.resolve(import.meta.dirname, '../..');
const configText = readFileSync(path.join(root, 'config/multi-company.yaml'), 'utf8');
const docText = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

/** The file's `folders:` block, as the page must quote it. */
const foldersBlock = () => {
  const start = configText.indexOf('folders:\n');
  return configText.slice(start, configText.indexOf('\n\n', start) + 1);
};

const SENT = [
  ['acme-2026-0001.pdf', SEED.workflows.managedPdfEmail, SEED.managedCompanyId],
  ['globex-2026-0001.pdf', SEED.workflows.secondManagedPdfEmail, SEED.secondManagedCompanyId],
  ['partner-2026-0001.pdf', SEED.workflows.pdfEmail, SEED.partnerCompanyId],
  ['acme-2026-0002-credit.pdf', SEED.workflows.pdfPrint, SEED.partnerCompanyId],
] as const;

describe('the multi-company example of docs/configuration.md', () => {
  it('is quoted on the page as config/multi-company.yaml holds it, and the file loads with its own sandbox and folders under var/multi-company/', () => {
    expect(docText).toContain(foldersBlock());
    const { config, warnings } = loadConfig(path.join(root, 'config/multi-company.yaml'), { env: {} });
    expect(warnings).toEqual([]);
    const under = (rel: string) => path.join(root, 'var/multi-company', rel);
    expect(config.sandbox).toMatchObject({ enabled: true, stateDir: under('sandbox') });
    expect(config.stateDir).toBe(under('state'));
    expect(config.folders.map((f) => [f.name, f.source.path, f.archiveDir, f.errorDir])).toEqual([
      ['clients', under('in/clients'), under('in/clients/.archive'), under('in/clients/.error')],
    ]);
    expect(config.returns.proofs.target).toMatchObject({ path: under('out/proofs') });
  });

  it('sends each file of the tree in its company and workflow, refuses the unknown company and the unrouted file with the reasons the page quotes, and writes archive, status and proofs where it says', async () => {
    const folder = (parse(configText) as { folders: Array<Record<string, unknown>> }).folders[0]!;
    const { name, workflowId, routes, companies } = folder as {
      name: string;
      workflowId: string;
      routes: unknown;
      companies: unknown;
    };
    const config = h.config(
      // The drop folder in the temp dir; archive and error folders at their defaults, as in the file.
      [{ name, workflowId, routes, companies, archiveDir: undefined, errorDir: undefined }] as Parameters<
        Harness['config']
      >[0],
      { returns: returnsConfig(h) },
    );
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const claimed = day(h.clock.now());
    for (const [file] of SENT) h.drop(name, file, await makePdf(file));
    h.drop(name, 'initech-2026-0001.pdf', await makePdf('initech'));
    h.drop(name, 'scan.pdf', await makePdf('scan'));
    await waitFor(async () => {
      const stats = await agent.journal.stats();
      return stats.files.done === SENT.length && stats.files.rejected === 2;
    });

    const jobs = (await h.jobs()) as Array<SandboxJob & { companyId: string }>;
    for (const [file, wf, company] of SENT) {
      expect(
        jobs.filter((j) => j.filename === file).map((j) => [j.workflowId, j.companyId]),
        file,
      ).toEqual([[wf, company]]);
    }
    expect(jobs.filter((j) => j.filename === 'initech-2026-0001.pdf' || j.filename === 'scan.pdf')).toEqual(
      [],
    );

    for (const file of SENT.map(([f]) => f)) {
      await pump(h, () => finalWithProofs(h, `${claimed}/${file}.status.json`));
    }
    const drop = h.folderPath(name);
    const sent = SENT.map(([f]) => f).sort();
    expect(listFiles(drop)).toEqual([
      ...sent.flatMap((f) => [`.archive/${claimed}/${f}`, `.archive/${claimed}/${f}.result.json`]),
      ...['initech-2026-0001.pdf', 'scan.pdf'].flatMap((f) => [
        `.error/${f}`,
        `.error/${f}.error.json`,
        `.error/${f}.error.txt`,
      ]),
    ]);
    expect(listFiles(statusDir(h))).toEqual(sent.map((f) => `${claimed}/${f}.status.json`));
    expect(listFiles(proofDir(h))).toEqual(
      sent.flatMap((f) => {
        const stem = `${claimed}/${f.slice(0, -'.pdf'.length)}/se_`;
        return [
          expect.stringMatching(new RegExp(`^${stem}\\w+-DELIVERY_PROOF\\.pdf$`)),
          expect.stringMatching(new RegExp(`^${stem}\\w+-SUBMISSION_REPORT\\.pdf$`)),
        ];
      }),
    );
    for (const [file, workflow, company] of SENT) {
      const result = JSON.parse(
        readFileSync(path.join(drop, '.archive', claimed, `${file}.result.json`), 'utf8'),
      );
      expect(result, file).toMatchObject({ status: 'uploaded', workflowId: workflow });
      expect(result.managedCompanyId, file).toBe(company === SEED.partnerCompanyId ? undefined : company);
    }
    // The page quotes the head of each .error.txt (its headline, reason, code and folder) as written.
    for (const [file, reason] of [
      [
        'initech-2026-0001.pdf',
        `"initech-2026-0001.pdf" names company "initech" (route "{company}-*.pdf"), which is not in the folder's companies table: known companies are "acme", "globex"`,
      ],
      [
        'scan.pdf',
        `"scan.pdf" matches none of the folder's routes: tried "*-credit.pdf", "partner-*.pdf", "{company}-*.pdf"`,
      ],
    ] as const) {
      const text = readFileSync(path.join(drop, '.error', `${file}.error.txt`), 'utf8');
      const head = text.split('\n').slice(0, 5).join('\n');
      expect(head).toBe(
        `${file} was not sent.\n\nReason: ${reason}\nCode:   DOCEX_INPUT_NO_ROUTE\nFolder: clients (workflow wf_pdf_email)`,
      );
      expect(docText).toContain(`\`\`\`text\n${head}\n\`\`\``);
      const record = JSON.parse(readFileSync(path.join(drop, '.error', `${file}.error.json`), 'utf8'));
      expect(record).toMatchObject({ code: 'DOCEX_INPUT_NO_ROUTE', reason });
    }
    await agent.stop();
  });

  it("refuses a company of the table that names no workflow, and stops the folder when a company's entry names a workflow it may not use, with the reasons the page quotes", async () => {
    const folder = (parse(configText) as { folders: Array<Record<string, unknown>> }).folders[0]!;
    const { routes, companies } = folder as {
      routes: unknown;
      companies: Record<string, { managedCompanyId: string; workflowId: string }>;
    };
    // The route names no workflow of its own: an entry that is only an id has none to go to.
    const refused = `route "{company}-*.pdf" names no workflowId, and the companies table names none for "initech": give the route a workflowId (theirs), or each of them { managedCompanyId, workflowId }`;
    const file = path.join(h.dir, 'multi-company-initech.yaml');
    writeFileSync(file, configText.replace('      globex: {', '      initech: cmp_initech\n      globex: {'));
    expect(() => loadConfig(file, { env: {} })).toThrow(
      expect.objectContaining({ code: 'DOCEX_CONFIG_INVALID', message: expect.stringContaining(refused) }),
    );
    expect(docText).toContain(`\`${refused}\``);

    const config = h.config([
      {
        name: 'wrong-workflow',
        workflowId: SEED.workflows.pdfEmail,
        routes,
        companies: {
          ...companies,
          globex: {
            managedCompanyId: SEED.secondManagedCompanyId,
            workflowId: SEED.workflows.managedPdfEmail,
          },
        },
      },
    ] as Parameters<Harness['config']>[0]);
    const agent = await h.startAgent(config);
    const stopped = h.logs.find((l) => l['msg'] === 'folder stopped' && l['folder'] === 'wrong-workflow');
    const reason = `companies.globex: route to workflow ${SEED.workflows.managedPdfEmail} was refused as managed company ${SEED.secondManagedCompanyId} (403): the credentials may not act for that company, or the workflow is not its to use`;
    expect(stopped?.['reason']).toBe(reason);
    expect(docText).toContain(`\`${reason}\``);
    await agent.stop();
  });
});
