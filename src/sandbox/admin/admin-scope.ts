/**
 * What Interface B may touch, and how its lists page. The partner-admin client acts for its own
 * company and the companies it manages; any other company is 403. Pages answer an opaque
 * `cursor` (absent on the last page); departments and users also take the object-typed form
 * `cursor[after]=<id>` (decisions, Interface B cursors).
 */
import { isoTime } from '../../core/clock.js';
import type { SandboxContext } from '../context.js';
import { type Handler, parseMaxItems, problem, type SandboxRequest } from '../http.js';
import { callerOf } from '../routes/route-helpers.js';
import type { StoredRecord } from '../store.js';
import { DEFAULT_MODIFIER } from './admin-schemas.js';

/** What the admin route modules need of a router (the guarded wrapper in index.ts adds auth). */
export interface RouteAdder {
  add(method: string, pattern: string, handler: Handler): unknown;
}

export interface CompanyRecord extends StoredRecord {
  role: string;
  technologyPartnerId?: string;
  managedCompanyIds?: string[];
}

/** Ids of the caller's own company and of every company it manages. */
export function administrableIds(ctx: SandboxContext, req: SandboxRequest): Set<string> {
  const ownId = callerOf(req).ownCompanyId;
  const own = ctx.store.get<CompanyRecord>('company', ownId);
  const ids = new Set<string>([ownId, ...(own?.managedCompanyIds ?? [])]);
  for (const company of ctx.store.iterate<CompanyRecord>('company')) {
    if (company.technologyPartnerId === ownId) ids.add(company.id);
  }
  return ids;
}

/** The company, when it exists (404) and the caller may administer it (403). */
export function administrableCompany(ctx: SandboxContext, req: SandboxRequest, id: string): CompanyRecord {
  const company = ctx.store.get<CompanyRecord>('company', id);
  if (!company) throw problem(404, `company ${id} does not exist`);
  if (!administrableIds(ctx, req).has(id)) {
    throw problem(403, `company ${id} is neither the caller's nor managed by it`);
  }
  return company;
}

/** A record of `kind` in company `companyId` (already checked): 404 when unknown or elsewhere. */
export function recordOfCompany<T extends StoredRecord>(
  ctx: SandboxContext,
  kind: string,
  companyId: string,
  id: string,
): T {
  const record = ctx.store.get<T>(kind, id);
  if (!record || record['companyId'] !== companyId) {
    throw problem(404, `${kind} ${id} does not exist in company ${companyId}`);
  }
  return record;
}

export function encodeCursor(afterId: string): string {
  return Buffer.from(JSON.stringify({ after: afterId }), 'utf8').toString('base64url');
}

function decodeCursor(raw: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string' && parsed.after !== '') return parsed.after;
  } catch {
    // fall through to the 400 below
  }
  throw problem(400, 'cursor is not a cursor this service issued');
}

/** The id to continue after: `cursor=<opaque>`, or `cursor[after]=<id>` when objects are allowed. */
export function cursorAfter(query: URLSearchParams, objectTyped: boolean): string | undefined {
  const opaque = query.get('cursor');
  if (opaque !== null) return decodeCursor(opaque);
  if (!objectTyped) return undefined;
  const keyed = query.get('cursor[after]') ?? query.get('cursor[id]');
  if (keyed === '') throw problem(400, 'cursor[after] is empty');
  return keyed ?? undefined;
}

/**
 * One page of `all` (in list order). `maxItems` is not in the specification of Interface B; the
 * sandbox takes it (1..1000, default 100) so paging can be exercised with few records.
 */
export function cursorPage<T extends { id: string }>(
  all: readonly T[],
  req: SandboxRequest,
  objectTyped: boolean,
): { items: T[]; cursor?: string } {
  const maxItems = parseMaxItems(req.query);
  const after = cursorAfter(req.query, objectTyped);
  let start = 0;
  if (after !== undefined) {
    const index = all.findIndex((r) => r.id === after);
    if (index < 0) throw problem(400, 'cursor names no item of this list');
    start = index + 1;
  }
  const items = all.slice(start, start + maxItems);
  const last = items[items.length - 1];
  return start + maxItems < all.length && last ? { items, cursor: encodeCursor(last.id) } : { items };
}

export function createdStamp(ctx: SandboxContext, by: string | undefined) {
  const at = isoTime(ctx.clock.now());
  return { createdAt: at, lastModifiedAt: at, lastModifiedBy: by ?? DEFAULT_MODIFIER };
}

export function modifiedStamp(ctx: SandboxContext, by: string | undefined) {
  return { lastModifiedAt: isoTime(ctx.clock.now()), lastModifiedBy: by ?? DEFAULT_MODIFIER };
}

/** A path's company id must agree with the body's, when the body names one. */
export function sameCompany(pathId: string, bodyId: string | undefined): void {
  if (bodyId !== undefined && bodyId !== pathId) {
    throw problem(400, `companyId ${bodyId} of the body differs from the path's ${pathId}`, [
      { field: 'companyId', message: `must be ${pathId}` },
    ]);
  }
}
