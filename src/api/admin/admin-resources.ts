/** Interface B companies, departments and users. Writes are sent once (never retried). */
import type { z } from 'zod';
import type { ApiCaller, CallOptions } from '../api-caller.js';
import { type CursorPage, iterateCursor } from '../pagination.js';
import type {
  AdminCompanyCreate,
  AdminCompanyUpdate,
  AdminDepartmentCreate,
  AdminDepartmentUpdate,
  AdminUserCreate,
  AdminUserUpdate,
  CompanyRole,
} from './admin-bodies.js';
import {
  adminCompanySchema,
  adminDepartmentSchema,
  adminUserSchema,
  companyListItemSchema,
  cursorPageSchema,
  managedCompaniesSchema,
  successSchema,
  technologyPartnersSchema,
} from './admin-schemas.js';

export interface AdminListQuery {
  /** The opaque cursor of the previous page. */
  cursor?: string;
  /** Not in the specification: sent only when set (the sandbox honours it). */
  maxItems?: number;
}

/** GET of a cursor page; the answer's `cursor` becomes `nextCursor` for iterateCursor. */
async function cursorPage<S extends z.ZodTypeAny>(
  caller: ApiCaller,
  route: string,
  params: Record<string, string>,
  query: Record<string, string | number | undefined>,
  item: S,
  options?: CallOptions,
): Promise<CursorPage<z.output<S>>> {
  const page = await caller.call({ method: 'GET', route, params, query, options }, cursorPageSchema(item));
  return { items: page.items as z.output<S>[], nextCursor: page.cursor ?? undefined };
}

export class AdminCompaniesApi {
  constructor(private readonly caller: ApiCaller) {}

  list(query: AdminListQuery & { role?: CompanyRole } = {}, options?: CallOptions) {
    return cursorPage(this.caller, '/api/companies', {}, { ...query }, companyListItemSchema, options);
  }

  iterate(query: { role?: CompanyRole; maxItems?: number } = {}, options?: CallOptions) {
    return iterateCursor((cursor) => this.list({ ...query, ...(cursor ? { cursor } : {}) }, options), {
      route: '/api/companies',
    });
  }

  get(id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'GET', route: '/api/companies/{id}', params: { id }, options },
      adminCompanySchema,
    );
  }

  create(body: AdminCompanyCreate, options?: CallOptions) {
    return this.caller.call({ method: 'POST', route: '/api/companies', body, options }, adminCompanySchema);
  }

  update(id: string, patch: AdminCompanyUpdate, options?: CallOptions) {
    return this.caller.call(
      { method: 'PATCH', route: '/api/companies/{id}', params: { id }, body: patch, options },
      adminCompanySchema,
    );
  }

  delete(id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'DELETE', route: '/api/companies/{id}', params: { id }, options },
      successSchema,
    );
  }

  technologyPartners(id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'GET', route: '/api/companies/{id}/technology-partners', params: { id }, options },
      technologyPartnersSchema,
    );
  }

  managedCompanies(id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'GET', route: '/api/companies/{id}/managed-companies', params: { id }, options },
      managedCompaniesSchema,
    );
  }
}

/** Departments or users of one company: `/api/company/{companyId}/<resource>`. */
class CompanyScopedApi<S extends z.ZodTypeAny, Create, Update> {
  protected readonly base: string;

  constructor(
    protected readonly caller: ApiCaller,
    resource: string,
    private readonly schema: S,
  ) {
    this.base = `/api/company/{companyId}/${resource}`;
  }

  list(companyId: string, query: AdminListQuery = {}, options?: CallOptions) {
    return cursorPage(this.caller, this.base, { companyId }, { ...query }, this.schema, options);
  }

  iterate(companyId: string, query: { maxItems?: number } = {}, options?: CallOptions) {
    return iterateCursor(
      (cursor) => this.list(companyId, { ...query, ...(cursor ? { cursor } : {}) }, options),
      { route: this.base },
    );
  }

  get(companyId: string, id: string, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call(
      { method: 'GET', route: `${this.base}/{id}`, params: { companyId, id }, options },
      this.schema,
    );
  }

  create(companyId: string, body: Create, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call(
      { method: 'POST', route: this.base, params: { companyId }, body, options },
      this.schema,
    );
  }

  update(companyId: string, id: string, patch: Update, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call(
      { method: 'PATCH', route: `${this.base}/{id}`, params: { companyId, id }, body: patch, options },
      this.schema,
    );
  }

  delete(companyId: string, id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'DELETE', route: `${this.base}/{id}`, params: { companyId, id }, options },
      successSchema,
    );
  }
}

export class AdminDepartmentsApi extends CompanyScopedApi<
  typeof adminDepartmentSchema,
  AdminDepartmentCreate,
  AdminDepartmentUpdate
> {
  constructor(caller: ApiCaller) {
    super(caller, 'departments', adminDepartmentSchema);
  }
}

export class AdminUsersApi extends CompanyScopedApi<
  typeof adminUserSchema,
  AdminUserCreate,
  AdminUserUpdate
> {
  constructor(caller: ApiCaller) {
    super(caller, 'users', adminUserSchema);
  }

  resetPassword(companyId: string, id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'POST', route: `${this.base}/{id}/reset-password`, params: { companyId, id }, options },
      successSchema,
    );
  }
}
