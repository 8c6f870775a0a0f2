/**
 * GET /usage (totals per channel and unit) and GET /usage/details (usage events, scrolled with an
 * opaque cursor). Both read the 'usage-event' records the sending-event lifecycle writes.
 */
import { isoTime } from '../../core/clock.js';
import type { SandboxContext } from '../context.js';
import { parseMaxItems, problem, type SandboxRequest } from '../http.js';
import type { StoredRecord } from '../store.js';
import { callerOf, parseTimeParam } from './route-helpers.js';

export const USAGE_EVENT_KIND = 'usage-event';

export interface UsageEventRecord extends StoredRecord {
  timestamp: string;
  companyId: string;
  departmentId?: string;
  jobId?: string;
  sendingEventId?: string;
  channel: string;
  unit: string;
  quantity: number;
}

/** The specification's strict format yyyy-MM-dd'T'HH:mm:ss.SSS'Z' (usage details query). */
const STRICT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function strictTime(query: URLSearchParams, name: string): number {
  const raw = query.get(name);
  if (raw === null || raw === '') throw problem(400, `query parameter ${name} is required`);
  const ms = STRICT_TIME.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms))
    throw problem(400, `query parameter ${name} must be yyyy-MM-ddTHH:mm:ss.SSSZ, got ${raw}`);
  return ms;
}

function range(query: URLSearchParams, strict: boolean): { from: number; until: number } {
  const from = strict ? strictTime(query, 'from') : (parseTimeParam(query, 'from', true) as number);
  const until = strict ? strictTime(query, 'until') : (parseTimeParam(query, 'until', true) as number);
  if (from >= until) throw problem(400, 'invalid date range: from must be before until');
  return { from, until };
}

function inRange(event: UsageEventRecord, from: number, until: number): boolean {
  const t = Date.parse(event.timestamp);
  return t >= from && t < until;
}

export function usageTotals(ctx: SandboxContext, req: SandboxRequest) {
  const { from, until } = range(req.query, false);
  const companyId = callerOf(req).companyId;
  const departmentId = req.query.get('departmentId');
  const totals = new Map<string, { channel: string; unit: string; count: number }>();
  for (const event of ctx.store.iterate<UsageEventRecord>(USAGE_EVENT_KIND, { companyId })) {
    if (!inRange(event, from, until)) continue;
    if (departmentId !== null && event.departmentId !== departmentId) continue;
    const key = `${event.channel}\u0000${event.unit}`;
    const total = totals.get(key) ?? { channel: event.channel, unit: event.unit, count: 0 };
    total.count += event.quantity;
    totals.set(key, total);
  }
  const sorted = [...totals.values()].sort(
    (a, b) => a.channel.localeCompare(b.channel) || a.unit.localeCompare(b.unit),
  );
  return { companyId, from: isoTime(from), until: isoTime(until), totals: sorted };
}

export function encodeUsageCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

function decodeCursor(raw: string): string {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(raw)) throw problem(400, 'cursor is not a cursor this service issued');
  return Buffer.from(raw, 'base64url').toString('utf8');
}

/** Departments from `departmentIds=a,b` or repeated `departmentIds=a&departmentIds=b`. */
function departmentFilter(query: URLSearchParams): Set<string> | undefined {
  const values = query.getAll('departmentIds').flatMap((v) => v.split(','));
  const ids = values.map((v) => v.trim()).filter((v) => v !== '');
  if (query.has('departmentIds') && ids.length === 0) throw problem(400, 'departmentIds is empty');
  return ids.length > 0 ? new Set(ids) : undefined;
}

function mayReadCompany(ctx: SandboxContext, req: SandboxRequest, companyId: string): boolean {
  const caller = callerOf(req);
  if (companyId === caller.companyId || companyId === caller.ownCompanyId) return true;
  const company = ctx.store.get<StoredRecord>('company', companyId);
  return company?.['technologyPartnerId'] === caller.ownCompanyId;
}

/**
 * Usage events in a range. Interface A reads one company (its own or a managed one); Interface B
 * passes `visibleCompanyIds`, and then no companyId means every company it may see.
 */
export function usageDetails(
  ctx: SandboxContext,
  req: SandboxRequest,
  visibleCompanyIds?: ReadonlySet<string>,
) {
  const { from, until } = range(req.query, true);
  const maxItems = parseMaxItems(req.query);
  const requested = req.query.get('companyId');
  if (requested === '') throw problem(400, 'companyId is empty');
  const companyId = requested ?? (visibleCompanyIds ? undefined : callerOf(req).companyId);
  if (companyId !== undefined) {
    const allowed = visibleCompanyIds
      ? visibleCompanyIds.has(companyId)
      : mayReadCompany(ctx, req, companyId);
    if (!allowed) throw problem(403, `usage of company ${companyId} is not visible to the caller`);
  }
  const departments = departmentFilter(req.query);
  const cursor = req.query.get('cursor');
  const after = cursor === null ? undefined : decodeCursor(cursor);

  const page = ctx.store.page<UsageEventRecord>(USAGE_EVENT_KIND, {
    ...(companyId !== undefined ? { companyId } : {}),
    maxItems: maxItems + 1,
    ...(after !== undefined ? { after } : {}),
    where: (r) => {
      const e = r as UsageEventRecord;
      if (companyId === undefined && !visibleCompanyIds?.has(e.companyId)) return false;
      if (!inRange(e, from, until)) return false;
      // With departmentIds, company-level usage (no department) is excluded.
      return departments === undefined || (e.departmentId !== undefined && departments.has(e.departmentId));
    },
  });
  if (!page) throw problem(400, 'cursor is not a cursor this service issued');
  const items = page.items.slice(0, maxItems);
  const last = items[items.length - 1];
  return page.items.length > maxItems && last ? { items, nextCursor: encodeUsageCursor(last.id) } : { items };
}
