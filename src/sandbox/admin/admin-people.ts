/** Interface B departments and users of one company (`/api/company/{companyId}/...`). */

import type { SandboxContext } from '../context.js';
import { problem, readJson, type SandboxRequest, sendJson } from '../http.js';
import { parseBody } from '../routes/route-helpers.js';
import type { StoredRecord } from '../store.js';
import {
  adminDepartmentCreateBody,
  adminDepartmentUpdateBody,
  adminUserCreateBody,
  adminUserUpdateBody,
} from './admin-schemas.js';
import type { RouteAdder } from './admin-scope.js';
import {
  administrableCompany,
  createdStamp,
  cursorPage,
  modifiedStamp,
  recordOfCompany,
  sameCompany,
} from './admin-scope.js';

function companyOf(ctx: SandboxContext, req: SandboxRequest): string {
  return administrableCompany(ctx, req, req.params['companyId'] ?? '').id;
}

function checkDepartments(ctx: SandboxContext, companyId: string, ids: readonly string[]): void {
  const errors = ids
    .filter((id) => ctx.store.get<StoredRecord>('department', id)?.['companyId'] !== companyId)
    .map((id) => ({
      field: 'departments',
      message: `department ${id} does not exist in company ${companyId}`,
    }));
  if (errors.length > 0) throw problem(400, errors.map((e) => e.message).join('; '), errors);
}

function newRecordId(ctx: SandboxContext, kind: string, given: string | undefined, prefix: string): string {
  const id = given ?? ctx.newId(prefix);
  if (ctx.store.get(kind, id)) throw problem(409, `${kind} ${id} already exists`);
  return id;
}

/**
 * Users made through Interface A lack the fields only Interface B sets; every user field is
 * required in Interface B's answer, so those get the service's defaults.
 */
export function toUserResponse(record: StoredRecord) {
  return { hasMFALoginEnabled: false, modulesAccess: ['SERVICE_CONNECT'], ...record };
}

function registerDepartments(router: RouteAdder, ctx: SandboxContext): void {
  const base = '/api/company/:companyId/departments';
  router.add('POST', base, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const body = parseBody(adminDepartmentCreateBody, await readJson(req.raw));
    sameCompany(companyId, body.companyId);
    const id = newRecordId(ctx, 'department', body.id, 'dep');
    const department = { ...body, id, companyId, ...createdStamp(ctx, body.lastModifiedBy) };
    ctx.store.insert('department', department, { companyId });
    sendJson(res, 201, department);
  });
  router.add('GET', base, (req, res) => {
    const companyId = companyOf(ctx, req);
    sendJson(res, 200, cursorPage(ctx.store.list('department', { companyId }), req, true));
  });
  router.add('GET', `${base}/:id`, (req, res) => {
    sendJson(res, 200, recordOfCompany(ctx, 'department', companyOf(ctx, req), req.params['id'] ?? ''));
  });
  router.add('PATCH', `${base}/:id`, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const department = recordOfCompany(ctx, 'department', companyId, req.params['id'] ?? '');
    const body = parseBody(adminDepartmentUpdateBody, await readJson(req.raw));
    sameCompany(companyId, body.companyId);
    const updated = { ...department, ...body, ...modifiedStamp(ctx, body.lastModifiedBy) };
    sendJson(res, 200, ctx.store.put('department', updated));
  });
  router.add('DELETE', `${base}/:id`, (req, res) => {
    const companyId = companyOf(ctx, req);
    const department = recordOfCompany(ctx, 'department', companyId, req.params['id'] ?? '');
    ctx.store.delete('department', department.id);
    sendJson(res, 200, { success: true });
  });
}

function registerUsers(router: RouteAdder, ctx: SandboxContext): void {
  const base = '/api/company/:companyId/users';
  router.add('POST', base, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const body = parseBody(adminUserCreateBody, await readJson(req.raw));
    sameCompany(companyId, body.companyId);
    checkDepartments(ctx, companyId, body.departments);
    const id = newRecordId(ctx, 'user', body.id, 'usr');
    const user = { ...body, id, companyId, ...createdStamp(ctx, body.lastModifiedBy) };
    ctx.store.insert('user', user, { companyId });
    sendJson(res, 201, user);
  });
  router.add('GET', base, (req, res) => {
    const companyId = companyOf(ctx, req);
    const page = cursorPage(ctx.store.list('user', { companyId }), req, true);
    sendJson(res, 200, { ...page, items: page.items.map(toUserResponse) });
  });
  router.add('GET', `${base}/:id`, (req, res) => {
    const user = recordOfCompany(ctx, 'user', companyOf(ctx, req), req.params['id'] ?? '');
    sendJson(res, 200, toUserResponse(user));
  });
  router.add('PATCH', `${base}/:id`, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const user = recordOfCompany(ctx, 'user', companyId, req.params['id'] ?? '');
    const body = parseBody(adminUserUpdateBody, await readJson(req.raw));
    sameCompany(companyId, body.companyId);
    if (body.departments) checkDepartments(ctx, companyId, body.departments);
    const updated = { ...user, ...body, ...modifiedStamp(ctx, body.lastModifiedBy) };
    sendJson(res, 200, toUserResponse(ctx.store.put('user', updated)));
  });
  router.add('DELETE', `${base}/:id`, (req, res) => {
    const user = recordOfCompany(ctx, 'user', companyOf(ctx, req), req.params['id'] ?? '');
    ctx.store.delete('user', user.id);
    sendJson(res, 200, { success: true });
  });
  router.add('POST', `${base}/:id/reset-password`, (req, res) => {
    const user = recordOfCompany(ctx, 'user', companyOf(ctx, req), req.params['id'] ?? '');
    // The real service mails a reset link; the sandbox only logs that one was asked for.
    ctx.log.info({ userId: user.id }, 'admin: password reset requested');
    sendJson(res, 200, { success: true });
  });
}

export function registerAdminPeopleRoutes(router: RouteAdder, ctx: SandboxContext): void {
  registerDepartments(router, ctx);
  registerUsers(router, ctx);
}
