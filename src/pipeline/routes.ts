/**
 * A folder's routes: which workflow and managed company a dropped file goes to, and in which mode
 * (a route's own, else the folder's), decided from its path relative to the drop folder once, at
 * its claim (the journal item keeps the answer): its name in a flat folder, `acme/invoices/x.pdf`
 * in a recursive one. First match wins; a folder without
 * routes sends every file to its own workflow and company. A route's match is a glob of the
 * folder's case rule (sources/glob.ts) and may hold one `{company}` token: the part of the name it
 * stands for (within one path segment: `{company}/*.pdf` takes a sub-folder's name) is looked up
 * in the folder's `companies` table (case-insensitively, in a Map: a name such as `__proto__` is an
 * unknown company like any other), which gives the managed company and, when the entry names one,
 * the company's own workflow (a workflow belongs to one company); an entry that names none takes
 * the route's.
 */
import { companyEntry, type FolderConfig, type FolderMode } from '../config/index.js';
import { DocexError } from '../core/errors.js';
import { quoteName } from '../domain/file-names.js';
import type { Workflow } from '../domain/wire.js';
import { compileGlob } from '../sources/glob.js';
import { relativePathOf } from '../sources/kinds.js';
import type { FolderRuntime } from './types.js';

export const COMPANY_TOKEN = '{company}';

/** Where a file goes. */
export interface RouteTarget {
  workflowId: string;
  managedCompanyId: string | undefined;
  /** The route's own mode; undefined: the folder's. */
  mode?: FolderMode | undefined;
  /** A `{company}` route's target: the companies table's name of its company (targets() only). */
  company?: string;
}

export type RouteDecision =
  | ({ ok: true; route: number | undefined; company?: string } & RouteTarget)
  | { ok: false; code: 'DOCEX_INPUT_NO_ROUTE'; reason: string; details: Record<string, unknown> };

interface RouteBase {
  match: string;
  mode: FolderMode | undefined;
}

/** A route without `{company}`: its glob takes the whole name. */
interface NameRoute extends RouteBase {
  whole: RegExp;
  workflowId: string;
  managedCompanyId: string | undefined;
}

/** A `{company}` route: the parts before and after the token (undefined: nothing may stand there). */
interface CompanyRoute extends RouteBase {
  whole?: undefined;
  before: RegExp | undefined;
  after: RegExp | undefined;
  /** The companies table by lower-case name, each with the workflow its files go by this route. */
  companies: ReadonlyMap<string, RouteCompany>;
}

type CompiledRoute = NameRoute | CompanyRoute;

/** A company of the table as a `{company}` route sends to it. */
interface RouteCompany {
  /** The name the table gives it. */
  name: string;
  managedCompanyId: string;
  /** The entry's own workflow, else the route's. */
  workflowId: string;
}

export interface FolderRoutes {
  /** The route a file of this relative path (its name in a flat folder) takes, or why none does. */
  resolve(relativePath: string): RouteDecision;
  /**
   * Every target a route can name (the folder's own when it has no routes), for the start-up
   * check: a `{company}` route's, each company of the table with its workflow.
   */
  targets(): RouteTarget[];
}

type RoutedFolder = Pick<FolderConfig, 'workflowId' | 'managedCompanyId'> &
  Partial<Pick<FolderConfig, 'routes' | 'companies'>>;
type RouteConfig = NonNullable<FolderConfig['routes']>[number];

/**
 * Compiles a folder's routes; throws DOCEX_SOURCE_GLOB_INVALID for a glob that cannot be what was
 * meant, and DOCEX_CONFIG_INVALID for a route that leaves some file without a workflow (the
 * schema refuses it first; a configuration built without the schema is checked here).
 */
export function compileRoutes(folder: RoutedFolder): FolderRoutes {
  const table = Object.entries(folder.companies ?? {}).map(([name, entry]) => ({
    name,
    ...companyEntry(entry),
  }));
  const routes = (folder.routes ?? []).map((route): CompiledRoute => {
    const at = route.match.indexOf(COMPANY_TOKEN);
    if (at < 0) {
      return {
        match: route.match,
        mode: route.mode,
        whole: compileGlob(route.match),
        workflowId: route.workflowId ?? noWorkflow(route, []),
        managedCompanyId: route.managedCompanyId ?? folder.managedCompanyId,
      };
    }
    const without = table.filter((c) => c.workflowId === undefined).map((c) => c.name);
    const companies = new Map<string, RouteCompany>();
    for (const c of table) {
      const workflowId = c.workflowId ?? route.workflowId ?? noWorkflow(route, without);
      companies.set(c.name.toLowerCase(), { name: c.name, managedCompanyId: c.managedCompanyId, workflowId });
    }
    const before = route.match.slice(0, at);
    const after = route.match.slice(at + COMPANY_TOKEN.length);
    return {
      match: route.match,
      mode: route.mode,
      before: before === '' ? undefined : compileGlob(before),
      after: after === '' ? undefined : compileGlob(after),
      companies,
    };
  });
  const known = table.map((c) => c.name);
  const tried = routes.map((r) => r.match);

  return {
    targets() {
      if (routes.length === 0)
        return [{ workflowId: folder.workflowId, managedCompanyId: folder.managedCompanyId }];
      return routes.flatMap((r) => {
        if (r.whole)
          return [{ workflowId: r.workflowId, managedCompanyId: r.managedCompanyId, ...modeOf(r) }];
        // Each managed company and workflow of the table once, by the first name the table gives them.
        const seen = new Set<string>();
        return [...r.companies.values()].flatMap((c) => {
          const key = `${c.managedCompanyId}/${c.workflowId}`;
          if (seen.has(key)) return [];
          seen.add(key);
          return [
            { workflowId: c.workflowId, managedCompanyId: c.managedCompanyId, ...modeOf(r), company: c.name },
          ];
        });
      });
    },
    resolve(relativePath) {
      if (routes.length === 0) {
        return {
          ok: true,
          route: undefined,
          workflowId: folder.workflowId,
          managedCompanyId: folder.managedCompanyId,
        };
      }
      for (const [i, r] of routes.entries()) {
        if (r.whole) {
          if (r.whole.test(relativePath)) {
            return {
              ok: true,
              route: i,
              workflowId: r.workflowId,
              managedCompanyId: r.managedCompanyId,
              ...modeOf(r),
            };
          }
          continue;
        }
        const company = companyPart(relativePath, r);
        if (company === undefined) continue;
        const entry = r.companies.get(company.toLowerCase());
        if (entry === undefined) {
          return {
            ok: false,
            code: 'DOCEX_INPUT_NO_ROUTE',
            reason: `${quoteName(relativePath)} names company ${quoteName(company)} (route ${quoteName(r.match)}), which is not in the folder's companies table: known companies are ${known.map((k) => quoteName(k)).join(', ')}`,
            details: { route: r.match, known },
          };
        }
        return {
          ok: true,
          route: i,
          company,
          workflowId: entry.workflowId,
          managedCompanyId: entry.managedCompanyId,
          ...modeOf(r),
        };
      }
      return {
        ok: false,
        code: 'DOCEX_INPUT_NO_ROUTE',
        reason: `${quoteName(relativePath)} matches none of the folder's routes: tried ${tried.map((m) => quoteName(m)).join(', ')}`,
        details: { routes: tried },
      };
    },
  };
}

/** A route that leaves files without a workflow (those of the companies named, for a `{company}` route). */
function noWorkflow(route: RouteConfig, companies: readonly string[]): never {
  const whose =
    companies.length === 0
      ? ''
      : `, and the companies table names none for ${companies.map((c) => quoteName(c)).join(', ')}`;
  throw new DocexError(
    'DOCEX_CONFIG_INVALID',
    `route ${quoteName(route.match)} names no workflowId${whose}`,
    { details: { route: route.match } },
  );
}

/**
 * The part of `name` a `{company}` route's token stands for, among the non-empty parts with the
 * rest matching the globs before and after it: the longest that is a known company (the earliest
 * of equal length), so `acme-be_x.pdf` under `{company}_*.pdf` is `acme-be`'s even when `acme` is
 * known too, and `{company}-*.pdf` reads `acme-be` from `acme-be-x.pdf` rather than `acme`; when
 * none is known, the shortest at the earliest place (the unknown company the refusal names).
 * Undefined when no part fits.
 */
function companyPart(name: string, route: CompanyRoute): string | undefined {
  const { companies } = route;
  const starts: number[] = [];
  const ends = new Set<number>();
  for (let at = 0; at <= name.length; at++) {
    const head = name.slice(0, at);
    if (route.before ? route.before.test(head) : head === '') starts.push(at);
    const tail = name.slice(at);
    if (route.after ? route.after.test(tail) : tail === '') ends.add(at);
  }
  let known: string | undefined;
  for (const start of starts) {
    for (const company of companies.keys()) {
      const end = start + company.length;
      if (known !== undefined && company.length <= known.length) continue;
      if (ends.has(end) && name.slice(start, end).toLowerCase() === company) known = name.slice(start, end);
    }
  }
  if (known !== undefined) return known;
  for (const start of starts) {
    // Within one path segment: `{company}/*.pdf` reads a sub-folder's name, never two.
    for (let end = start + 1; end <= name.length && name[end - 1] !== '/'; end++)
      if (ends.has(end)) return name.slice(start, end);
  }
  return undefined;
}

/** A route's own mode, when it has one (a target without one is in the folder's). */
function modeOf(route: CompiledRoute): { mode?: FolderMode } {
  return route.mode === undefined ? {} : { mode: route.mode };
}

const compiled = new WeakMap<object, FolderRoutes>();

/** The folder's routes, compiled once per configuration (a reload brings a new one). */
export function routesOf(config: FolderConfig): FolderRoutes {
  let routes = compiled.get(config);
  if (!routes) {
    routes = compileRoutes(config);
    compiled.set(config, routes);
  }
  return routes;
}

/**
 * The workflow record an item is checked against: the one of the workflow recorded at its claim,
 * as the start-up check fetched it (or, for an item whose workflow no route names any more, as
 * the pipeline fetched it before driving the item: Pipeline.withRecordedWorkflow); the folder's
 * own when neither has it.
 */
export function workflowOf(runtime: FolderRuntime, workflowId: string): Workflow {
  return runtime.workflows?.get(workflowId) ?? runtime.workflow;
}

/**
 * The managed company of an item's calls: the one recorded at its claim ('' for none); the
 * folder's for an item recorded before the journal kept it.
 */
export function companyOf(
  runtime: FolderRuntime,
  item: { managedCompanyId: string | undefined },
): string | undefined {
  if (item.managedCompanyId !== undefined) return item.managedCompanyId || undefined;
  return runtime.config.managedCompanyId;
}

/**
 * The payload-word options an item's rows are built with: those of the route its path takes now
 * (a route's own, else the folder's), when that route still sends in the item's recorded mode;
 * the folder's otherwise (the routes changed since its claim).
 */
export function payloadOptionsOf(
  runtime: FolderRuntime,
  item: { fileName: string; sourcePath?: string | undefined; mode: string },
): Pick<FolderConfig, 'mapping' | 'onInvalidRow'> {
  const { config } = runtime;
  const decision = routesOf(config).resolve(relativePathOf(config, item));
  const route = decision.ok && decision.route !== undefined ? config.routes?.[decision.route] : undefined;
  if (!route || (route.mode ?? runtime.mode) !== item.mode) {
    return { mapping: config.mapping, onInvalidRow: config.onInvalidRow };
  }
  return {
    mapping: route.mapping ?? config.mapping,
    onInvalidRow: route.onInvalidRow ?? config.onInvalidRow,
  };
}
