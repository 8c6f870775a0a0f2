import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.js';
import { compileRoutes } from '../../src/pipeline/routes.js';

const ACME = '11111111-1111-4111-8111-111111111111';
const GLOBEX = '22222222-2222-4222-8222-222222222222';

const folder = {
  workflowId: 'wf_default',
  managedCompanyId: 'cmp_folder',
  routes: [
    { match: '*-credit.xml', workflowId: 'wf_credit' },
    { match: '*.xml', workflowId: 'wf_invoice', managedCompanyId: 'cmp_xml' },
    { match: '{company}-*.pdf', workflowId: 'wf_letters' },
  ],
  companies: { acme: ACME, Globex: GLOBEX },
};

describe('routes: which workflow and company a file goes to', () => {
  it('sends every file to the folder workflow and company when the folder has no routes', () => {
    const routes = compileRoutes({ workflowId: 'wf', managedCompanyId: 'cmp' });
    expect(routes.resolve('anything.bin')).toEqual({
      ok: true,
      route: undefined,
      workflowId: 'wf',
      managedCompanyId: 'cmp',
    });
  });

  it('takes the first route that matches, with its company or else the folder company', () => {
    const routes = compileRoutes(folder);
    expect(routes.resolve('2026-credit.xml')).toMatchObject({
      ok: true,
      route: 0,
      workflowId: 'wf_credit',
      managedCompanyId: 'cmp_folder',
    });
    expect(routes.resolve('2026-debit.XML')).toMatchObject({
      ok: true,
      route: 1,
      workflowId: 'wf_invoice',
      managedCompanyId: 'cmp_xml',
    });
  });

  it('looks the {company} part of the name up in the companies table, in any case', () => {
    const routes = compileRoutes(folder);
    expect(routes.resolve('acme-letter-1.pdf')).toMatchObject({
      ok: true,
      route: 2,
      company: 'acme',
      workflowId: 'wf_letters',
      managedCompanyId: ACME,
    });
    expect(routes.resolve('GLOBEX-x.pdf')).toMatchObject({ ok: true, managedCompanyId: GLOBEX });
  });

  it('reads the longest known company the {company} part can be, whatever shorter known company it starts with', () => {
    const routes = compileRoutes({
      workflowId: 'wf',
      managedCompanyId: undefined,
      routes: [
        { match: '{company}_*.pdf', workflowId: 'wf_underscore' },
        { match: '{company}-*.pdf', workflowId: 'wf_dash' },
      ],
      companies: { acme: ACME, 'acme-be': GLOBEX },
    });
    expect(routes.resolve('acme-be_invoice.pdf')).toMatchObject({
      ok: true,
      route: 0,
      company: 'acme-be',
      managedCompanyId: GLOBEX,
    });
    expect(routes.resolve('ACME-BE-invoice.pdf')).toMatchObject({
      route: 1,
      company: 'ACME-BE',
      managedCompanyId: GLOBEX,
    });
    expect(routes.resolve('acme-invoice.pdf')).toMatchObject({ company: 'acme', managedCompanyId: ACME });
    expect(routes.resolve('acme_be-invoice.pdf')).toMatchObject({ company: 'acme', managedCompanyId: ACME });
    // No known company fits: the refusal names the shortest part at the earliest place.
    const unknown = routes.resolve('acme-nl_invoice.pdf');
    expect(unknown.ok ? '' : unknown.reason).toContain('names company "acme-nl"');
  });

  it('refuses an unknown company, naming it and the known ones', () => {
    const decision = compileRoutes(folder).resolve('initech-letter.pdf');
    expect(decision).toMatchObject({ ok: false, code: 'DOCEX_INPUT_NO_ROUTE' });
    expect(decision.ok ? '' : decision.reason).toBe(
      '"initech-letter.pdf" names company "initech" (route "{company}-*.pdf"), which is not in the folder\'s companies table: known companies are "acme", "Globex"',
    );
  });

  it('refuses __proto__, constructor and other Object.prototype names as unknown companies', () => {
    const routes = compileRoutes(folder);
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const decision = routes.resolve(`${name}-x.pdf`);
      expect(decision, name).toMatchObject({ ok: false, code: 'DOCEX_INPUT_NO_ROUTE' });
      expect(decision.ok ? '' : decision.reason).toContain(`names company "${name}"`);
    }
  });

  it('refuses a name no route matches, listing the routes it was tried against, the name escaped', () => {
    const decision = compileRoutes(folder).resolve('notes\u202etxt.csv');
    expect(decision).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_NO_ROUTE',
      reason:
        '"notes\\u202etxt.csv" matches none of the folder\'s routes: tried "*-credit.xml", "*.xml", "{company}-*.pdf"',
      details: { routes: ['*-credit.xml', '*.xml', '{company}-*.pdf'] },
    });
  });

  it('names every workflow and company a route can send to (the start-up check fetches each)', () => {
    expect(compileRoutes(folder).targets()).toEqual([
      { workflowId: 'wf_credit', managedCompanyId: 'cmp_folder' },
      { workflowId: 'wf_invoice', managedCompanyId: 'cmp_xml' },
      { workflowId: 'wf_letters', managedCompanyId: ACME, company: 'acme' },
      { workflowId: 'wf_letters', managedCompanyId: GLOBEX, company: 'Globex' },
    ]);
  });

  it("sends each company of a {company} route to the workflow its entry names, and an entry that names none to the route's", () => {
    const routes = compileRoutes({
      workflowId: 'wf',
      managedCompanyId: undefined,
      routes: [{ match: '{company}-*.pdf', workflowId: 'wf_route', mode: 'single-file' }],
      companies: {
        acme: ACME,
        Globex: { managedCompanyId: GLOBEX, workflowId: 'wf_globex' },
      },
    });
    expect(routes.resolve('ACME-1.pdf')).toEqual({
      ok: true,
      route: 0,
      company: 'ACME',
      workflowId: 'wf_route',
      managedCompanyId: ACME,
      mode: 'single-file',
    });
    expect(routes.resolve('globex-1.pdf')).toEqual({
      ok: true,
      route: 0,
      company: 'globex',
      workflowId: 'wf_globex',
      managedCompanyId: GLOBEX,
      mode: 'single-file',
    });
    expect(routes.targets()).toEqual([
      { workflowId: 'wf_route', managedCompanyId: ACME, mode: 'single-file', company: 'acme' },
      { workflowId: 'wf_globex', managedCompanyId: GLOBEX, mode: 'single-file', company: 'Globex' },
    ]);
  });

  it('lists a managed company and workflow of the table once among the targets, by its first name, and each workflow of a company that has two names', () => {
    const routes = compileRoutes({
      workflowId: 'wf',
      managedCompanyId: undefined,
      routes: [{ match: '{company}-*.pdf' }],
      companies: {
        acme: { managedCompanyId: ACME, workflowId: 'wf_acme' },
        'acme-be': { managedCompanyId: ACME, workflowId: 'wf_acme' },
        'acme-nl': { managedCompanyId: ACME, workflowId: 'wf_acme_nl' },
      },
    });
    expect(routes.targets()).toEqual([
      { workflowId: 'wf_acme', managedCompanyId: ACME, company: 'acme' },
      { workflowId: 'wf_acme_nl', managedCompanyId: ACME, company: 'acme-nl' },
    ]);
    expect(routes.resolve('acme-nl-1.pdf')).toMatchObject({
      workflowId: 'wf_acme_nl',
      managedCompanyId: ACME,
    });
  });

  it('refuses to compile a route that leaves a file without a workflow (a configuration built without the schema)', () => {
    const compile = (routes: Array<{ match: string; workflowId?: string }>) => () =>
      compileRoutes({
        workflowId: 'wf',
        managedCompanyId: undefined,
        routes,
        companies: { acme: ACME, globex: { managedCompanyId: GLOBEX, workflowId: 'wf_globex' } },
      });
    expect(compile([{ match: '{company}-*.pdf' }])).toThrow(
      expect.objectContaining({
        code: 'DOCEX_CONFIG_INVALID',
        message: 'route "{company}-*.pdf" names no workflowId, and the companies table names none for "acme"',
      }),
    );
    expect(compile([{ match: '*.pdf' }])).toThrow(
      expect.objectContaining({
        code: 'DOCEX_CONFIG_INVALID',
        message: 'route "*.pdf" names no workflowId',
      }),
    );
  });
});

describe('routes of a recursive folder: matched against the relative path', () => {
  const tree = {
    workflowId: 'wf_default',
    managedCompanyId: undefined,
    routes: [
      { match: 'acme/invoices/*.pdf', workflowId: 'wf_acme_invoices', managedCompanyId: 'cmp_acme' },
      { match: '*/reminders/*.csv', workflowId: 'wf_reminders' },
      { match: '{company}/*.pdf', workflowId: 'wf_company' },
    ],
    companies: { acme: ACME, Globex: GLOBEX },
  };

  it('matches sub-path globs, * staying within one folder', () => {
    const routes = compileRoutes(tree);
    expect(routes.resolve('acme/invoices/x.pdf')).toMatchObject({ ok: true, route: 0 });
    expect(routes.resolve('globex/reminders/r.CSV')).toMatchObject({ ok: true, route: 1 });
    // `*` does not cross folders: one level too deep matches neither.
    expect(routes.resolve('a/b/reminders/r.csv')).toMatchObject({ ok: false, code: 'DOCEX_INPUT_NO_ROUTE' });
    expect(routes.resolve('acme/invoices/2026/x.pdf')).toMatchObject({ ok: false });
  });

  it('takes {company} from one sub-folder name, never across folders', () => {
    const routes = compileRoutes(tree);
    expect(routes.resolve('Globex/letter.pdf')).toMatchObject({
      ok: true,
      route: 2,
      company: 'Globex',
      managedCompanyId: GLOBEX,
    });
    const decision = routes.resolve('acme/other/letter.pdf');
    expect(decision).toMatchObject({ ok: false });
    expect(decision.ok ? '' : decision.reason).toBe(
      '"acme/other/letter.pdf" matches none of the folder\'s routes: tried "acme/invoices/*.pdf", "*/reminders/*.csv", "{company}/*.pdf"',
    );
  });

  it('matches a flat folder file by its name as before: * takes no sub-path', () => {
    const routes = compileRoutes({ workflowId: 'wf', routes: [{ match: '*.pdf', workflowId: 'wf_pdf' }] });
    expect(routes.resolve('x.pdf')).toMatchObject({ ok: true, route: 0 });
    expect(routes.resolve('acme/x.pdf')).toMatchObject({ ok: false });
  });
});

const parse = (extra: Record<string, unknown>) =>
  agentConfigSchema.safeParse({
    sandbox: { enabled: true },
    folders: [{ name: 'f', source: { type: 'local', path: 'in/f' }, workflowId: 'wf', ...extra }],
  });
const messages = (extra: Record<string, unknown>) => parse(extra).error?.issues.map((i) => i.message);

describe('routes in the configuration', () => {
  it('reads routes and a companies table', () => {
    const parsed = parse({ routes: folder.routes, companies: folder.companies });
    expect(parsed.data?.folders[0]?.routes).toEqual(folder.routes);
    expect(parsed.data?.folders[0]?.companies).toEqual(folder.companies);
  });

  it('refuses a route without a workflowId, unless it is a {company} route whose every company names its own', () => {
    const refused = parse({ routes: [{ match: '*.pdf' }] }).error?.issues;
    expect(refused?.map((i) => [i.path, i.message])).toEqual([
      [
        ['folders', 0, 'routes', 0, 'workflowId'],
        'route "*.pdf" names no workflowId (only a {company} route may leave it to the companies table)',
      ],
    ]);
    const companies = {
      acme: { managedCompanyId: ACME, workflowId: 'wf_acme' },
      globex: { managedCompanyId: GLOBEX, workflowId: 'wf_globex' },
    };
    const parsed = parse({ routes: [{ match: '{company}-*.pdf' }], companies });
    expect(parsed.error).toBeUndefined();
    expect(parsed.data?.folders[0]?.companies).toEqual(companies);
  });

  it('refuses a {company} route without a workflowId while a company of the table names none, naming each such company', () => {
    const refused = parse({
      routes: [{ match: '*-credit.pdf', workflowId: 'wf_credit' }, { match: '{company}-*.pdf' }],
      companies: {
        acme: ACME,
        globex: { managedCompanyId: GLOBEX, workflowId: 'wf_globex' },
        initech: '33333333-3333-4333-8333-333333333333',
      },
    }).error?.issues;
    expect(refused?.map((i) => [i.path, i.message])).toEqual([
      [
        ['folders', 0, 'routes', 1, 'workflowId'],
        'route "{company}-*.pdf" names no workflowId, and the companies table names none for "acme", "initech": give the route a workflowId (theirs), or each of them { managedCompanyId, workflowId }',
      ],
    ]);
  });

  it('refuses an entry of the companies table that names a workflow without its company, or anything else', () => {
    const issues = (entry: unknown) =>
      parse({ routes: [{ match: '{company}-*.pdf', workflowId: 'wf' }], companies: { acme: entry } }).error
        ?.issues.length;
    expect(issues({ workflowId: 'wf_acme' })).toBeGreaterThan(0);
    expect(issues({ managedCompanyId: ACME, workflowId: 'wf_acme', mode: 'single-file' })).toBeGreaterThan(0);
    expect(issues({ managedCompanyId: ACME })).toBeGreaterThan(0);
    expect(issues('')).toBeGreaterThan(0);
    expect(issues({ managedCompanyId: ACME, workflowId: 'wf_acme' })).toBeUndefined();
  });

  it('refuses a route an earlier identical, match-everything or wider route hides', () => {
    expect(
      messages({
        routes: [
          { match: '*.pdf', workflowId: 'a' },
          { match: '*.pdf', workflowId: 'b' },
        ],
      }),
    ).toEqual(['route "*.pdf" can never match: routes[0] has the same match']);
    expect(
      messages({
        routes: [
          { match: '**', workflowId: 'a' },
          { match: '*.pdf', workflowId: 'b' },
        ],
      }),
    ).toEqual(['route "*.pdf" can never match: routes[0] ("**") takes every file first']);
    expect(
      messages({
        routes: [
          { match: '*', workflowId: 'a' },
          { match: 'x', workflowId: 'b' },
        ],
      }),
    ).toEqual(['route "x" can never match: routes[0] ("*") takes every file first']);
    expect(
      messages({
        routes: [
          { match: '*.pdf', workflowId: 'a' },
          { match: 'invoice-*.PDF', workflowId: 'b' },
          { match: '*.csv', workflowId: 'c' },
          { match: '{company}-*.csv', workflowId: 'd' },
        ],
        companies: { acme: ACME },
      }),
    ).toEqual([
      'route "invoice-*.PDF" can never match: routes[0] ("*.pdf") takes every name it matches first',
      'route "{company}-*.csv" can never match: routes[2] ("*.csv") takes every name it matches first',
    ]);
    // An earlier route that takes only some of a later one's names leaves the later one reachable.
    expect(
      messages({
        routes: [
          { match: 'invoice-*.pdf', workflowId: 'a' },
          { match: '*.pdf', workflowId: 'b' },
        ],
      }),
    ).toBeUndefined();
  });

  it('refuses a route after ** in a recursive folder, but not after * (which takes no sub-path there)', () => {
    const routes = [
      { match: '*', workflowId: 'a' },
      { match: 'acme/*.pdf', workflowId: 'b' },
    ];
    expect(parse({ recursive: true, routes }).success).toBe(true);
    expect(
      messages({
        recursive: { depth: 2 },
        routes: [{ match: '**', workflowId: 'a' }, routes[1]],
      }),
    ).toEqual(['route "acme/*.pdf" can never match: routes[0] ("**") takes every file first']);
  });

  it('refuses {company} without a companies table, twice in one match, or beside a managedCompanyId', () => {
    expect(messages({ routes: [{ match: '{company}-*.pdf', workflowId: 'a' }] })).toEqual([
      '"{company}-*.pdf" names a {company} but the folder has no companies table',
    ]);
    expect(
      messages({
        routes: [{ match: '{company}-{company}.pdf', workflowId: 'a' }],
        companies: { acme: ACME },
      }),
    ).toEqual(['"{company}-{company}.pdf" holds {company} more than once']);
    expect(
      messages({
        routes: [{ match: '{company}.pdf', workflowId: 'a', managedCompanyId: 'x' }],
        companies: { acme: ACME },
      }),
    ).toEqual(['"{company}.pdf" takes its company from {company}: drop managedCompanyId']);
  });

  it('reads a route mode and its payload-word options, and refuses payload-pdf on a route, saying why', () => {
    const words = { match: '*.csv', workflowId: 'w', mode: 'payload-word', onInvalidRow: 'skip' };
    expect(parse({ routes: [words] }).data?.folders[0]?.routes).toEqual([words]);
    expect(messages({ routes: [{ match: '*.pdf', workflowId: 'p', mode: 'payload-pdf' }] })).toEqual([
      'route "*.pdf" cannot take mode payload-pdf: payload-pdf pairs files across the folder (a PDF and its sidecar, an index naming PDFs), so it is the folder\'s mode only (set mode: payload-pdf on the folder; its routes then choose among payload-pdf workflows)',
    ]);
    expect(
      messages({ mode: 'payload-pdf', routes: [{ match: '*.csv', workflowId: 'w', mode: 'payload-word' }] }),
    ).toEqual([
      'route "*.csv" cannot take mode payload-word in a payload-pdf folder: the folder pairs its files across the folder (sidecars, an index), so its routes keep its mode (drop the route\'s mode, or give these files a folder of their own)',
    ]);
    expect(
      messages({
        routes: [{ match: '*.pdf', workflowId: 'p', mode: 'single-file', onInvalidRow: 'skip', mapping: {} }],
      }),
    ).toEqual(['route "*.pdf": mapping and onInvalidRow are for payload-word routes, not single-file']);
  });

  it('names the mode of each route that has one among its targets', () => {
    const routes = compileRoutes({
      workflowId: 'wf',
      managedCompanyId: undefined,
      routes: [
        { match: '*.csv', workflowId: 'wf_words', mode: 'payload-word' },
        { match: '*.pdf', workflowId: 'wf_pdf' },
      ],
    });
    expect(routes.targets()).toEqual([
      { workflowId: 'wf_words', managedCompanyId: undefined, mode: 'payload-word' },
      { workflowId: 'wf_pdf', managedCompanyId: undefined },
    ]);
    expect(routes.resolve('list.CSV')).toMatchObject({ ok: true, route: 0, mode: 'payload-word' });
    expect(routes.resolve('a.pdf')).not.toHaveProperty('mode');
  });

  it('refuses a company name that is not a plain word, and a __proto__ key never reaches the table', () => {
    expect(parse({ companies: { 'a b': 'x' } }).error?.issues[0]?.path).toEqual([
      'folders',
      0,
      'companies',
      'a b',
    ]);
    const parsed = parse({
      routes: [{ match: '{company}-*.pdf', workflowId: 'a' }],
      companies: JSON.parse(`{"__proto__": "${ACME}", "acme": "${ACME}"}`),
    });
    const companies = parsed.data?.folders[0]?.companies ?? {};
    expect(Object.keys(companies)).toEqual(['acme']);
    const routes = compileRoutes(parsed.data!.folders[0]!);
    expect(routes.resolve('__proto__-x.pdf')).toMatchObject({ ok: false, code: 'DOCEX_INPUT_NO_ROUTE' });
  });
});
