import type { z } from 'zod';
import { companySchema, departmentSchema, pageSchema, userSchema } from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { iterateAfter, type Page } from './pagination.js';

export interface PhysicalAddress {
  street: string;
  streetNr: string;
  postalCode: string;
  box?: string;
  city: string;
  countryCode: string;
  addressAdditionalLine?: string;
}

/** POST /companies: a technology partner creating a managed company. */
export interface CompanyCreate {
  id?: string;
  erpId: string;
  name: string;
  headAddress: PhysicalAddress;
  isActive: boolean;
  identifiers: { type: string; value: string }[];
  emailAddress?: string;
  identificationNumber?: string;
  phoneNumber?: string;
  lastModifiedBy?: string;
}

export interface DepartmentCreate {
  name: string;
  headAddress: PhysicalAddress;
  hasSeparateInvoicing: boolean;
  isActive: boolean;
  identificationNumber?: string;
  emailAddress?: string;
  phoneNumber?: string;
}

export interface UserCreate {
  username: string;
  role: 'CLIENT_VIEWER' | 'CLIENT_OPERATOR' | 'CLIENT_DEPARTMENT_ADMIN' | 'CLIENT_ADMIN';
  departments: string[];
  firstName: string;
  lastName: string;
  preferredLanguage: 'EN' | 'NL' | 'FR';
  emailAddress: string;
  enabled: boolean;
  hasQERDSMandate: boolean;
}

export interface ListQuery {
  after?: string | undefined;
  maxItems?: number;
}

/** Create, list, read and update of one account resource; none of the writes is retried. */
class ResourceApi<S extends z.ZodType<{ id: string }>, Create, Update = Partial<Create>> {
  private readonly page;

  constructor(
    private readonly caller: ApiCaller,
    private readonly base: string,
    private readonly schema: S,
  ) {
    this.page = pageSchema(schema);
  }

  create(body: Create, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call({ method: 'POST', route: this.base, body, options }, this.schema);
  }

  async list(query: ListQuery = {}, options?: CallOptions): Promise<Page<z.output<S>>> {
    const page = await this.caller.call(
      { method: 'GET', route: this.base, query: { after: query.after, maxItems: query.maxItems }, options },
      this.page,
    );
    return { items: page.items as z.output<S>[], totalItems: page.totalItems };
  }

  iterate(query: { pageSize?: number; after?: string } = {}, options?: CallOptions) {
    return iterateAfter<z.output<S>>((after, maxItems) => this.list({ after, maxItems }, options), {
      route: this.base,
      ...query,
    });
  }

  get(id: string, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call(
      { method: 'GET', route: `${this.base}/{id}`, params: { id }, options },
      this.schema,
    );
  }

  update(id: string, patch: Update, options?: CallOptions): Promise<z.output<S>> {
    return this.caller.call(
      { method: 'PATCH', route: `${this.base}/{id}`, params: { id }, body: patch, options },
      this.schema,
    );
  }
}

export class CompaniesApi extends ResourceApi<typeof companySchema, CompanyCreate> {
  constructor(caller: ApiCaller) {
    super(caller, '/companies', companySchema);
  }
}

/** x-managed-company-id is required on create (pass managedCompanyId or set the client default). */
export class DepartmentsApi extends ResourceApi<typeof departmentSchema, DepartmentCreate> {
  constructor(caller: ApiCaller) {
    super(caller, '/departments', departmentSchema);
  }
}

/** x-managed-company-id is required on create (pass managedCompanyId or set the client default). */
export class UsersApi extends ResourceApi<typeof userSchema, UserCreate> {
  constructor(caller: ApiCaller) {
    super(caller, '/users', userSchema);
  }
}
