/**
 * `docex-agent admin companies|departments|users|reports|news|usage …`: Interface B from the
 * command line, JSON or table output. Creates and updates take the body as `--data` JSON.
 */
import { type Command, Option } from 'commander';
import type { CompanyRole, ReportType } from '../api/admin/index.js';
import { type CursorPage, iterateCursor } from '../api/pagination.js';
import {
  type AdminCliDeps,
  type AdminRun,
  adminAction,
  connectionOptions,
  parseData,
  parseDate,
  parsePositiveInt,
} from './output/admin-context.js';

const COLUMNS = {
  companies: ['id', 'name', 'role', 'erpId', 'isActive'],
  departments: ['id', 'name', 'erpId', 'companyId', 'isActive'],
  users: ['id', 'username', 'role', 'firstName', 'lastName', 'enabled'],
  reports: ['id', 'reportType', 'status', 'from', 'until', 'fileName'],
  usage: ['id', 'timestamp', 'companyId', 'departmentId', 'channel', 'unit', 'quantity'],
} as const;

interface ListOpts {
  cursor?: string;
  maxItems?: number;
  all?: boolean;
}

function listOptions(command: Command): Command {
  return command
    .option('--cursor <cursor>', 'continue after this cursor (from the previous page)')
    .option('--max-items <n>', 'page size', parsePositiveInt)
    .option('--all', 'follow the cursor to the last page');
}

/** One page (its cursor on stderr in table mode) or, with --all, every item. */
async function printList<T>(
  run: AdminRun,
  opts: ListOpts,
  columns: readonly string[],
  fetch: (cursor: string | undefined) => Promise<CursorPage<T>>,
): Promise<void> {
  if (opts.all) {
    const items: T[] = [];
    for await (const item of iterateCursor(fetch, { route: 'list' })) items.push(item);
    await run.print(run.format === 'json' ? { items } : items, columns);
    return;
  }
  const page = await fetch(opts.cursor);
  if (run.format === 'json') {
    await run.print(page.nextCursor ? { items: page.items, cursor: page.nextCursor } : { items: page.items });
    return;
  }
  await run.print(page.items, columns);
  if (page.nextCursor) run.io.stderr.write(`more: --cursor ${page.nextCursor}\n`);
}

function pageQuery(opts: ListOpts, cursor: string | undefined) {
  return { ...(cursor ? { cursor } : {}), ...(opts.maxItems ? { maxItems: opts.maxItems } : {}) };
}

function companies(admin: Command, deps: AdminCliDeps): void {
  const cmd = admin.command('companies').description('companies the partner administers');
  listOptions(cmd.command('list').description('list companies'))
    .addOption(new Option('--role <role>').choices(['REGULAR', 'TECHNOLOGY_PARTNER', 'MANAGED_COMPANY']))
    .action(
      adminAction(deps, async (run, opts: ListOpts & { role?: CompanyRole }) => {
        await printList(run, opts, COLUMNS.companies, (c) =>
          run.client.companies.list({ ...pageQuery(opts, c), ...(opts.role ? { role: opts.role } : {}) }),
        );
      }),
    );
  cmd
    .command('get <id>')
    .action(adminAction(deps, async (run, id: string) => run.print(await run.client.companies.get(id))));
  cmd
    .command('create')
    .requiredOption('--data <json>', 'company create body (JSON or @file)', parseData)
    .action(
      adminAction(deps, async (run, opts: { data: never }) =>
        run.print(await run.client.companies.create(opts.data)),
      ),
    );
  cmd
    .command('update <id>')
    .requiredOption('--data <json>', 'fields to change (JSON or @file)', parseData)
    .action(
      adminAction(deps, async (run, id: string, opts: { data: never }) =>
        run.print(await run.client.companies.update(id, opts.data)),
      ),
    );
  cmd
    .command('delete <id>')
    .action(adminAction(deps, async (run, id: string) => run.print(await run.client.companies.delete(id))));
  cmd
    .command('technology-partners <id>')
    .action(
      adminAction(deps, async (run, id: string) =>
        run.print(await run.client.companies.technologyPartners(id)),
      ),
    );
  cmd
    .command('managed <id>')
    .description('companies managed by this company')
    .action(
      adminAction(deps, async (run, id: string) =>
        run.print(await run.client.companies.managedCompanies(id)),
      ),
    );
}

/** What the department and user APIs have in common, for the commands both get. */
interface CompanyScopedApi {
  list(companyId: string, query: { cursor?: string; maxItems?: number }): Promise<CursorPage<unknown>>;
  get(companyId: string, id: string): Promise<unknown>;
  create(companyId: string, body: never): Promise<unknown>;
  update(companyId: string, id: string, body: never): Promise<unknown>;
  delete(companyId: string, id: string): Promise<unknown>;
}

/** Departments and users share their shape: all under `--company <id>`. */
function companyScoped(admin: Command, deps: AdminCliDeps, name: 'departments' | 'users'): void {
  const cmd = admin.command(name).description(`${name} of one company`);
  const api = (run: AdminRun): CompanyScopedApi =>
    name === 'departments' ? run.client.departments : run.client.users;
  const scoped = (sub: Command) => sub.requiredOption('--company <id>', 'company id');
  listOptions(scoped(cmd.command('list'))).action(
    adminAction(deps, async (run, opts: ListOpts & { company: string }) => {
      await printList(run, opts, COLUMNS[name], (c) => api(run).list(opts.company, pageQuery(opts, c)));
    }),
  );
  scoped(cmd.command('get <id>')).action(
    adminAction(deps, async (run, id: string, opts: { company: string }) =>
      run.print(await api(run).get(opts.company, id)),
    ),
  );
  scoped(cmd.command('create'))
    .requiredOption(
      '--data <json>',
      `${name.slice(0, -1)} create body (JSON or @file); companyId defaults to --company`,
      parseData,
    )
    .action(
      adminAction(deps, async (run, opts: { company: string; data: Record<string, unknown> }) =>
        run.print(await api(run).create(opts.company, { companyId: opts.company, ...opts.data } as never)),
      ),
    );
  scoped(cmd.command('update <id>'))
    .requiredOption('--data <json>', 'fields to change (JSON or @file)', parseData)
    .action(
      adminAction(deps, async (run, id: string, opts: { company: string; data: never }) =>
        run.print(await api(run).update(opts.company, id, opts.data)),
      ),
    );
  scoped(cmd.command('delete <id>')).action(
    adminAction(deps, async (run, id: string, opts: { company: string }) =>
      run.print(await api(run).delete(opts.company, id)),
    ),
  );
  if (name === 'users') {
    scoped(cmd.command('reset-password <id>')).action(
      adminAction(deps, async (run, id: string, opts: { company: string }) =>
        run.print(await run.client.users.resetPassword(opts.company, id)),
      ),
    );
  }
}

const REPORT_TYPES = ['USAGE', 'SENDINGS', 'INVOICES'];

function reports(admin: Command, deps: AdminCliDeps): void {
  const cmd = admin.command('reports').description('reports of one company (CSV behind a pre-signed URL)');
  const scoped = (sub: Command) => sub.requiredOption('--company <id>', 'company id');
  scoped(cmd.command('create'))
    .addOption(new Option('--type <type>').choices(REPORT_TYPES).makeOptionMandatory())
    .requiredOption('--from <date>', 'start (inclusive)', parseDate)
    .requiredOption('--until <date>', 'end (exclusive)', parseDate)
    .option('--department <id>', 'only this department')
    .action(
      adminAction(
        deps,
        async (
          run,
          opts: { company: string; type: ReportType; from: string; until: string; department?: string },
        ) =>
          run.print(
            await run.client.reports.create(opts.company, {
              companyId: opts.company,
              reportType: opts.type,
              from: opts.from,
              until: opts.until,
              ...(opts.department ? { departmentId: opts.department } : {}),
            }),
          ),
      ),
    );
  scoped(cmd.command('get <id>')).action(
    adminAction(deps, async (run, id: string, opts: { company: string }) =>
      run.print(await run.client.reports.get(opts.company, id)),
    ),
  );
  scoped(cmd.command('delete <id>')).action(
    adminAction(deps, async (run, id: string, opts: { company: string }) =>
      run.print(await run.client.reports.delete(opts.company, id)),
    ),
  );
  scoped(cmd.command('download-url <id>'))
    .description('print the pre-signed URL of the CSV (valid 10 minutes; treat it as a secret)')
    .action(
      adminAction(deps, async (run, id: string, opts: { company: string }) =>
        run.print(await run.client.reports.downloadUrl(opts.company, id)),
      ),
    );
  scoped(cmd.command('search'))
    .addOption(new Option('--type <type>').choices(REPORT_TYPES))
    .option('--department <id>')
    .option('--from <date>', 'reports starting at or after', parseDate)
    .option('--until <date>', 'reports ending at or before', parseDate)
    .action(
      adminAction(
        deps,
        async (
          run,
          opts: { company: string; type?: ReportType; department?: string; from?: string; until?: string },
        ) => {
          const items = await run.client.reports.search(opts.company, {
            ...(opts.type ? { reportType: opts.type } : {}),
            ...(opts.department ? { departmentId: opts.department } : {}),
            ...(opts.from ? { from: opts.from } : {}),
            ...(opts.until ? { until: opts.until } : {}),
          });
          await run.print(run.format === 'json' ? { items } : items, COLUMNS.reports);
        },
      ),
    );
}

function news(admin: Command, deps: AdminCliDeps): void {
  const cmd = admin.command('news').description('news items');
  cmd
    .command('create')
    .requiredOption('--title <text>')
    .requiredOption('--body <text>')
    .addOption(new Option('--language <lang>').choices(['EN', 'NL', 'FR']).makeOptionMandatory())
    .option('--publish-from <date>', 'first moment shown', parseDate)
    .option('--publish-until <date>', 'last moment shown', parseDate)
    .action(
      adminAction(
        deps,
        async (
          run,
          opts: { title: string; body: string; language: 'EN'; publishFrom?: string; publishUntil?: string },
        ) =>
          run.print(
            await run.client.news.create({
              title: opts.title,
              body: opts.body,
              language: opts.language,
              ...(opts.publishFrom ? { publishFrom: opts.publishFrom } : {}),
              ...(opts.publishUntil ? { publishUntil: opts.publishUntil } : {}),
            }),
          ),
      ),
    );
  cmd
    .command('delete <id>')
    .action(adminAction(deps, async (run, id: string) => run.print(await run.client.news.delete(id))));
}

function usage(admin: Command, deps: AdminCliDeps): void {
  const cmd = admin.command('usage').description('usage events (see also: docex-agent usage export)');
  listOptions(cmd.command('details'))
    .requiredOption('--from <date>', 'start (inclusive)', parseDate)
    .requiredOption('--until <date>', 'end (exclusive)', parseDate)
    .option('--company <id>', 'only this company')
    .option('--department <id...>', 'only usage of these departments')
    .action(
      adminAction(
        deps,
        async (
          run,
          opts: ListOpts & { from: string; until: string; company?: string; department?: string[] },
        ) => {
          await printList(run, opts, COLUMNS.usage, (c) =>
            run.client.usage.details({
              from: opts.from,
              until: opts.until,
              ...pageQuery(opts, c),
              ...(opts.company ? { companyId: opts.company } : {}),
              ...(opts.department ? { departmentIds: opts.department } : {}),
            }),
          );
        },
      ),
    );
}

export function registerAdminCommand(program: Command, deps: AdminCliDeps = {}): void {
  const admin = connectionOptions(
    program
      .command('admin')
      .description(
        'partner administration (Interface B): companies, departments, users, reports, news, usage',
      ),
  );
  companies(admin, deps);
  companyScoped(admin, deps, 'departments');
  companyScoped(admin, deps, 'users');
  reports(admin, deps);
  news(admin, deps);
  usage(admin, deps);
}
