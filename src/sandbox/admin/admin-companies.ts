/** Interface B companies: CRUD over the partner's own and managed companies, and their relations. */

import type { SandboxContext } from '../context.js';
import { problem, readJson, sendJson } from '../http.js';
import { callerOf, parseBody } from '../routes/route-helpers.js';
import { adminCompanyCreateBody, adminCompanyUpdateBody, COMPANY_ROLES } from './admin-schemas.js';
import type { RouteAdder } from './admin-scope.js';
import {
  administrableCompany,
  administrableIds,
  type CompanyRecord,
  createdStamp,
  cursorPage,
  modifiedStamp,
} from './admin-scope.js';

/** Company response: the create fields plus timestamps; the relations are in the list item only. */
export function toCompanyResponse(record: CompanyRecord) {
  const { role: _r, technologyPartnerId: _t, managedCompanyIds: _m, ...rest } = record;
  return rest;
}

/** Company list item: the response without isTechnologyPartner, plus role and relations. */
export function toCompanyListItem(record: CompanyRecord) {
  const { isTechnologyPartner: _i, ...rest } = record;
  return rest;
}

function managedIdsOf(ctx: SandboxContext, company: CompanyRecord): string[] {
  const ids = new Set(company.managedCompanyIds ?? []);
  for (const c of ctx.store.iterate<CompanyRecord>('company')) {
    if (c.technologyPartnerId === company.id) ids.add(c.id);
  }
  return [...ids];
}

export function registerAdminCompanyRoutes(router: RouteAdder, ctx: SandboxContext): void {
  router.add('POST', '/api/companies', async (req, res) => {
    const body = parseBody(adminCompanyCreateBody, await readJson(req.raw));
    const partnerId = callerOf(req).ownCompanyId;
    const partner = administrableCompany(ctx, req, partnerId);
    const id = body.id ?? ctx.newId('cmp');
    if (ctx.store.get('company', id)) throw problem(409, `company ${id} already exists`);
    // What the partner creates, it manages: otherwise it could not administer it afterwards.
    const company: CompanyRecord = {
      ...body,
      id,
      isTechnologyPartner: body.isTechnologyPartner ?? false,
      role: body.isTechnologyPartner ? 'TECHNOLOGY_PARTNER' : 'MANAGED_COMPANY',
      technologyPartnerId: partnerId,
      ...createdStamp(ctx, body.lastModifiedBy),
    };
    ctx.store.transaction(() => {
      ctx.store.insert('company', company, { companyId: id });
      ctx.store.put('company', { ...partner, managedCompanyIds: [...(partner.managedCompanyIds ?? []), id] });
    });
    ctx.log.info({ companyId: id, technologyPartnerId: partnerId }, 'admin: company created');
    sendJson(res, 201, toCompanyResponse(company));
  });

  router.add('GET', '/api/companies', (req, res) => {
    const role = req.query.get('role');
    if (role !== null && !(COMPANY_ROLES as readonly string[]).includes(role)) {
      throw problem(400, `role must be one of ${COMPANY_ROLES.join(', ')}`);
    }
    const ids = administrableIds(ctx, req);
    const all = ctx.store
      .list<CompanyRecord>('company')
      .filter((c) => ids.has(c.id) && (role === null || c.role === role));
    const page = cursorPage(all, req, false);
    sendJson(res, 200, { ...page, items: page.items.map(toCompanyListItem) });
  });

  router.add('GET', '/api/companies/:id', (req, res) => {
    sendJson(res, 200, toCompanyResponse(administrableCompany(ctx, req, req.params['id'] ?? '')));
  });

  router.add('PATCH', '/api/companies/:id', async (req, res) => {
    const company = administrableCompany(ctx, req, req.params['id'] ?? '');
    const body = parseBody(adminCompanyUpdateBody, await readJson(req.raw));
    const updated: CompanyRecord = { ...company, ...body, ...modifiedStamp(ctx, body.lastModifiedBy) };
    if (body.isTechnologyPartner !== undefined && company.role !== 'REGULAR') {
      updated.role = body.isTechnologyPartner ? 'TECHNOLOGY_PARTNER' : 'MANAGED_COMPANY';
    }
    sendJson(res, 200, toCompanyResponse(ctx.store.put('company', updated)));
  });

  router.add('DELETE', '/api/companies/:id', (req, res) => {
    const company = administrableCompany(ctx, req, req.params['id'] ?? '');
    const ownId = callerOf(req).ownCompanyId;
    if (company.id === ownId) throw problem(403, 'the caller cannot delete its own company');
    ctx.store.transaction(() => {
      for (const kind of ['department', 'user']) {
        for (const r of ctx.store.list(kind, { companyId: company.id })) ctx.store.delete(kind, r.id);
      }
      ctx.store.delete('company', company.id);
      const own = ctx.store.get<CompanyRecord>('company', ownId);
      if (own?.managedCompanyIds?.includes(company.id)) {
        ctx.store.put('company', {
          ...own,
          managedCompanyIds: own.managedCompanyIds.filter((m) => m !== company.id),
        });
      }
    });
    ctx.log.info({ companyId: company.id }, 'admin: company deleted');
    sendJson(res, 200, { success: true });
  });

  router.add('GET', '/api/companies/:id/technology-partners', (req, res) => {
    const company = administrableCompany(ctx, req, req.params['id'] ?? '');
    const ids = company.technologyPartnerId ? [company.technologyPartnerId] : [];
    sendJson(res, 200, { companyId: company.id, technologyPartnerCompanyIds: ids });
  });

  router.add('GET', '/api/companies/:id/managed-companies', (req, res) => {
    const company = administrableCompany(ctx, req, req.params['id'] ?? '');
    sendJson(res, 200, { companyId: company.id, managedCompanyIds: managedIdsOf(ctx, company) });
  });
}
