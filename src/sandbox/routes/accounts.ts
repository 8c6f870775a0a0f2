/**
 * Interface A accounts: companies (a technology partner and the companies it manages),
 * departments, users, usage and health. Everything is scoped to the caller's company, or to the
 * managed company named by x-managed-company-id (auth has already checked that header).
 */
import { isoTime } from '../../core/clock.js';
import type { RouteModule, SandboxContext } from '../context.js';
import { parseMaxItems, problem, type Router, readJson, type SandboxRequest, sendJson } from '../http.js';
import type { StoredRecord } from '../store.js';
import {
  companyCreateBody,
  companyUpdateBody,
  departmentCreateBody,
  departmentUpdateBody,
  userCreateBody,
  userUpdateBody,
} from './account-schemas.js';
import { callerOf, companyPage, ownRecord, parseBody } from './route-helpers.js';
import { usageDetails, usageTotals } from './usage-query.js';

const DEFAULT_MODIFIER = 'Partner.API';
export const SANDBOX_API_VERSION = '1.0.0';

interface CompanyRecord extends StoredRecord {
  role: string;
  technologyPartnerId?: string;
  managedCompanyIds?: string[];
}

function ownCompany(ctx: SandboxContext, req: SandboxRequest): CompanyRecord {
  const own = ctx.store.get<CompanyRecord>('company', callerOf(req).ownCompanyId);
  if (!own) throw problem(403, 'the caller has no company');
  return own;
}

function visibleCompany(ctx: SandboxContext, req: SandboxRequest, id: string): CompanyRecord {
  const company = ctx.store.get<CompanyRecord>('company', id);
  if (!company) throw problem(404, `company ${id} does not exist`);
  const own = ownCompany(ctx, req);
  const visible =
    id === own.id || company.technologyPartnerId === own.id || (own.managedCompanyIds ?? []).includes(id);
  if (!visible) throw problem(403, `company ${id} is not the caller's nor managed by it`);
  return company;
}

function managedCompanies(ctx: SandboxContext, own: CompanyRecord): CompanyRecord[] {
  const ids = new Set(own.managedCompanyIds ?? []);
  return ctx.store
    .list<CompanyRecord>('company')
    .filter((c) => ids.has(c.id) || c.technologyPartnerId === own.id);
}

/** A page cut from an in-memory list, with the same `after` rule as the store's pages. */
function slicePage<T extends { id: string }>(all: T[], req: SandboxRequest) {
  const maxItems = parseMaxItems(req.query);
  const after = req.query.get('after');
  let start = 0;
  if (after !== null) {
    const index = all.findIndex((r) => r.id === after);
    if (index < 0) throw problem(400, `after "${after}" names no item of this list`);
    start = index + 1;
  }
  return { items: all.slice(start, start + maxItems), totalItems: all.length };
}

function requireManagedHeader(req: SandboxRequest, what: string): void {
  const value = req.raw.headers['x-managed-company-id'];
  if (value === undefined || value === '')
    throw problem(400, `the x-managed-company-id header is required to create a ${what}`);
}

function checkDepartments(ctx: SandboxContext, companyId: string, ids: readonly string[]): void {
  const errors = ids
    .map((id, i) => ({ id, i, dep: ctx.store.get<StoredRecord>('department', id) }))
    .filter(({ dep }) => dep?.['companyId'] !== companyId)
    .map(({ id, i }) => ({
      field: `departments.${i}`,
      message: `department ${id} does not exist in company ${companyId}`,
    }));
  if (errors.length > 0) throw problem(400, errors.map((e) => e.message).join('; '), errors);
}

/** The modification stamp of a change made now. */
function touched(ctx: SandboxContext, by: string = DEFAULT_MODIFIER) {
  return { lastModifiedAt: isoTime(ctx.clock.now()), lastModifiedBy: by };
}

function stamp(ctx: SandboxContext, by: string = DEFAULT_MODIFIER) {
  const at = isoTime(ctx.clock.now());
  return { createdAt: at, lastModifiedAt: at, lastModifiedBy: by };
}

/** GET list and GET one of a kind the caller's company owns (departments, users). */
function addOwnedReads(router: Router, ctx: SandboxContext, route: string, kind: string): void {
  router.add('GET', route, (req, res) => {
    sendJson(res, 200, companyPage(ctx.store, kind, req));
  });
  router.add('GET', `${route}/:id`, (req, res) => {
    sendJson(res, 200, ownRecord(ctx.store, kind, req.params['id'] ?? '', req, kind));
  });
}

const registerCompanyRoutes: RouteModule = (router, ctx) => {
  router.add('POST', '/companies', async (req, res) => {
    const own = ownCompany(ctx, req);
    if (own.role !== 'TECHNOLOGY_PARTNER')
      throw problem(403, 'only a technology partner can create companies');
    const body = parseBody(companyCreateBody, await readJson(req.raw));
    const id = body.id ?? ctx.newId('cmp');
    if (ctx.store.get('company', id)) throw problem(409, `company ${id} already exists`);
    const company: CompanyRecord = {
      ...body,
      id,
      isTechnologyPartner: false,
      role: 'MANAGED_COMPANY',
      technologyPartnerId: own.id,
      ...stamp(ctx, body.lastModifiedBy),
    };
    ctx.store.transaction(() => {
      ctx.store.insert('company', company, { companyId: id });
      ctx.store.put('company', { ...own, managedCompanyIds: [...(own.managedCompanyIds ?? []), id] });
    });
    ctx.log.info({ companyId: id, technologyPartnerId: own.id }, 'managed company created');
    sendJson(res, 201, company);
  });
  router.add('GET', '/companies', (req, res) => {
    sendJson(res, 200, slicePage(managedCompanies(ctx, ownCompany(ctx, req)), req));
  });
  router.add('GET', '/companies/:id', (req, res) => {
    sendJson(res, 200, visibleCompany(ctx, req, req.params['id'] ?? ''));
  });
  router.add('PATCH', '/companies/:id', async (req, res) => {
    const company = visibleCompany(ctx, req, req.params['id'] ?? '');
    const body = parseBody(companyUpdateBody, await readJson(req.raw));
    sendJson(
      res,
      200,
      ctx.store.put('company', { ...company, ...body, ...touched(ctx, body.lastModifiedBy) }),
    );
  });
};

const registerDepartmentRoutes: RouteModule = (router, ctx) => {
  router.add('POST', '/departments', async (req, res) => {
    requireManagedHeader(req, 'department');
    const body = parseBody(departmentCreateBody, await readJson(req.raw));
    const companyId = callerOf(req).companyId;
    const id = ctx.newId('dep');
    const department = { ...body, id, companyId, erpId: `ERP-${id}`, ...stamp(ctx) };
    ctx.store.insert('department', department, { companyId });
    sendJson(res, 201, department);
  });
  addOwnedReads(router, ctx, '/departments', 'department');
  router.add('PATCH', '/departments/:id', async (req, res) => {
    const department = ownRecord(ctx.store, 'department', req.params['id'] ?? '', req, 'department');
    const body = parseBody(departmentUpdateBody, await readJson(req.raw));
    sendJson(res, 200, ctx.store.put('department', { ...department, ...body, ...touched(ctx) }));
  });
};

const registerUserRoutes: RouteModule = (router, ctx) => {
  router.add('POST', '/users', async (req, res) => {
    requireManagedHeader(req, 'user');
    const body = parseBody(userCreateBody, await readJson(req.raw));
    const companyId = callerOf(req).companyId;
    checkDepartments(ctx, companyId, body.departments);
    const user = { ...body, id: ctx.newId('usr'), companyId, hasMFALoginEnabled: false, ...stamp(ctx) };
    ctx.store.insert('user', user, { companyId });
    sendJson(res, 201, user);
  });
  addOwnedReads(router, ctx, '/users', 'user');
  router.add('PATCH', '/users/:id', async (req, res) => {
    const user = ownRecord(ctx.store, 'user', req.params['id'] ?? '', req, 'user');
    const body = parseBody(userUpdateBody, await readJson(req.raw));
    if (body.departments) checkDepartments(ctx, String(user['companyId']), body.departments);
    sendJson(res, 200, ctx.store.put('user', { ...user, ...body, ...touched(ctx) }));
  });
};

export const registerAccountRoutes: RouteModule = (router, ctx) => {
  registerCompanyRoutes(router, ctx);
  registerDepartmentRoutes(router, ctx);
  registerUserRoutes(router, ctx);
  router.add('GET', '/usage', (req, res) => {
    sendJson(res, 200, usageTotals(ctx, req));
  });
  router.add('GET', '/usage/details', (req, res) => {
    sendJson(res, 200, usageDetails(ctx, req));
  });
  router.add('GET', '/health', (_req, res) => {
    sendJson(res, 200, { status: 'ok', version: SANDBOX_API_VERSION, time: isoTime(ctx.clock.now()) });
  });
};
