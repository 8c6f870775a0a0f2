import { describe, expect, it } from 'vitest';
import { planFolders } from '../../src/agent/folders.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Workflow } from '../../src/domain/wire.js';
import { EMAIL_WORD, workflow } from '../pipeline/payload/workflows.js';

const PDF_EMAIL = workflow('wf_pdf_email', 'PDF', ['EMAIL']);
const PDF_PRINT = workflow('wf_pdf_print', 'PDF', ['EASY_PRINT']);
const PAYLOAD_PDF = workflow('wf_payload_pdf', 'PAYLOAD_PDF', ['EASY_PRINT']);
const KNOWN = new Map<string, Workflow>(
  [PDF_EMAIL, PDF_PRINT, EMAIL_WORD, PAYLOAD_PDF].map((w) => [w.id, w]),
);

const folders = (routes: unknown[], extra: Record<string, unknown> = {}) =>
  agentConfigSchema.parse({
    sandbox: { enabled: true },
    folders: [
      { name: 'f', source: { type: 'local', path: 'in/f' }, workflowId: PDF_EMAIL.id, routes, ...extra },
    ],
  }).folders;

/** planFolders with workflows answered from KNOWN, each fetch recorded as `workflow@company`. */
async function plan(routes: unknown[], extra: Record<string, unknown> = {}) {
  const fetched: string[] = [];
  const result = await planFolders(
    folders(routes, extra),
    async (id, company) => {
      fetched.push(`${id}@${company ?? ''}`);
      const found = KNOWN.get(id);
      if (!found) throw new Error(`no workflow ${id}`);
      return found;
    },
    silentLogger(),
  );
  return { ...result, fetched };
}

describe('the start-up check of a folder with routes', () => {
  it("fetches each route's workflow as each company it may be sent as, once each, and runs the folder with them", async () => {
    const { running, fetched } = await plan(
      [
        { match: '*-print.pdf', workflowId: PDF_PRINT.id },
        { match: '{company}-*.pdf', workflowId: PDF_PRINT.id },
      ],
      { companies: { acme: 'mc_acme', globex: 'mc_globex' } },
    );
    expect(fetched).toEqual([
      'wf_pdf_email@',
      'wf_pdf_print@',
      'wf_pdf_print@mc_acme',
      'wf_pdf_print@mc_globex',
    ]);
    expect([...(running.get('f')?.workflows?.keys() ?? [])]).toEqual([PDF_PRINT.id]);
  });

  it("fetches a {company} route's workflow as each company of the table, each company's own, and checks each against the route's mode", async () => {
    const companies = {
      acme: { managedCompanyId: 'mc_acme', workflowId: PDF_EMAIL.id },
      globex: { managedCompanyId: 'mc_globex', workflowId: PDF_PRINT.id },
      initech: 'mc_initech',
    };
    const { running, fetched } = await plan([{ match: '{company}-*.pdf', workflowId: PDF_PRINT.id }], {
      companies,
    });
    expect(fetched).toEqual([
      'wf_pdf_email@',
      'wf_pdf_email@mc_acme',
      'wf_pdf_print@mc_globex',
      'wf_pdf_print@mc_initech',
    ]);
    expect([...(running.get('f')?.workflows?.keys() ?? [])]).toEqual([PDF_EMAIL.id, PDF_PRINT.id]);

    const { stopped } = await plan([{ match: '{company}-*.csv', mode: 'payload-word' }], {
      companies: {
        acme: { managedCompanyId: 'mc_acme', workflowId: EMAIL_WORD.id },
        globex: { managedCompanyId: 'mc_globex', workflowId: PDF_PRINT.id },
      },
    });
    expect(stopped[0]?.reason).toBe(
      `companies.globex: route to folder f: mode payload-word does not fit workflow ${PDF_PRINT.id} (input source PDF needs single-file) (as managed company mc_globex)`,
    );
  });

  it('stops the folder when a route names a workflow of another mode', async () => {
    const { running, stopped } = await plan([{ match: '*.csv', workflowId: EMAIL_WORD.id }]);
    expect(running.size).toBe(0);
    expect(stopped[0]?.reason).toContain(
      `route to folder f: mode single-file does not fit workflow ${EMAIL_WORD.id}`,
    );
  });

  it("checks a route's workflow against the route's own mode: a payload-word route of a single-file folder runs, a misfit stops the folder", async () => {
    const { running } = await plan([
      { match: '*.csv', workflowId: EMAIL_WORD.id, mode: 'payload-word' },
      { match: '*.pdf', workflowId: PDF_PRINT.id },
    ]);
    expect(running.get('f')?.mode).toBe('single-file');
    expect([...(running.get('f')?.workflows?.keys() ?? [])]).toEqual([EMAIL_WORD.id, PDF_PRINT.id]);
    const { stopped } = await plan([{ match: '*.pdf', workflowId: PDF_PRINT.id, mode: 'payload-word' }]);
    expect(stopped[0]?.reason).toContain(
      `route to folder f: mode payload-word does not fit workflow ${PDF_PRINT.id} (input source PDF needs single-file)`,
    );
  });

  it('lets a single-file folder have a sendAt for the jobs of its payload-word routes, and no other', async () => {
    const sendAt = { delay: '2h' };
    const words = { match: '*.csv', workflowId: EMAIL_WORD.id, mode: 'payload-word' };
    expect((await plan([words], { sendAt })).running.has('f')).toBe(true);
    const { stopped } = await plan([{ match: '*.pdf', workflowId: PDF_PRINT.id }], { sendAt });
    expect(stopped[0]?.reason).toContain('sendAt is for payload folders');
  });

  it('stops a folder that is payload-pdf by its workflow when a route takes another mode', async () => {
    const { running, stopped } = await plan(
      [{ match: '*.csv', workflowId: EMAIL_WORD.id, mode: 'payload-word' }],
      { workflowId: PAYLOAD_PDF.id },
    );
    expect(running.size).toBe(0);
    expect(stopped[0]?.reason).toContain(
      `a route to workflow ${EMAIL_WORD.id} takes mode payload-word, but the folder is payload-pdf`,
    );
  });

  it('stops the folder when a route glob cannot be what was meant', async () => {
    const { stopped } = await plan([{ match: '[z-a].pdf', workflowId: PDF_PRINT.id }]);
    expect(stopped[0]?.reason).toMatch(/^routes: invalid glob "\[z-a\]\.pdf"/);
  });
});
