/** Small pieces every Interface A route of this folder shares: the caller, pages, body checks. */
import type { z } from 'zod';
import { type Caller, parseMaxItems, problem, readJson, type SandboxRequest } from '../http.js';
import type { Store, StoredRecord } from '../store.js';

/** The authenticated caller; auth runs before every Interface A handler, so absence is a bug. */
export function callerOf(req: SandboxRequest): Caller {
  if (!req.caller) throw problem(401, 'the call is not authenticated');
  return req.caller;
}

/** `{items, totalItems}` of one company's records of a kind, paged by `after`/`maxItems`. */
export function companyPage<T extends StoredRecord>(
  store: Store,
  kind: string,
  req: SandboxRequest,
  where?: (record: T) => boolean,
): { items: T[]; totalItems: number } {
  const maxItems = parseMaxItems(req.query);
  const after = req.query.get('after') ?? undefined;
  const page = store.page<T>(kind, {
    companyId: callerOf(req).companyId,
    maxItems,
    ...(after !== undefined ? { after } : {}),
    ...(where ? { where: where as (r: StoredRecord) => boolean } : {}),
  });
  if (!page) throw problem(400, `after "${after}" names no item of this list`);
  return page;
}

/** One record of the caller's company: 404 when unknown, 403 when another company's. */
export function ownRecord<T extends StoredRecord>(
  store: Store,
  kind: string,
  id: string,
  req: SandboxRequest,
  label: string,
): T {
  const record = store.get<T>(kind, id);
  if (!record) throw problem(404, `${label} ${id} does not exist`);
  if (record['companyId'] !== callerOf(req).companyId)
    throw problem(403, `${label} ${id} belongs to another company`);
  return record;
}

/** Each zod issue as an `errors[]` entry of a problem. */
export function zodErrors(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((issue) => ({
    field: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
}

/** Validates a body with zod; each issue becomes an `errors[]` entry of a 400. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const errors = zodErrors(result.error);
  throw problem(
    400,
    `invalid request body: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
    errors,
  );
}

/** Epoch ms of an ISO 8601 date or date-time (UTC when only a date); malformed is a 400 naming the parameter. */
export function parseTimeParam(query: URLSearchParams, name: string, required = false): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') {
    if (required) throw problem(400, `query parameter ${name} is required`);
    return undefined;
  }
  const ms = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw)
    ? Date.parse(raw)
    : Number.NaN;
  if (Number.isNaN(ms)) throw problem(400, `query parameter ${name} is not an ISO 8601 date-time: ${raw}`);
  return ms;
}

/** Reads the JSON body of a request (400 when malformed) and validates it with `schema`. */
export async function readJsonBody<S extends z.ZodType>(req: SandboxRequest, schema: S): Promise<z.infer<S>> {
  return parseBody(schema, await readJson(req.raw));
}

/** The specification's strict time format yyyy-MM-dd'T'HH:mm:ss.SSS'Z'. */
const STRICT_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Epoch ms of a query time in the strict wire format; absent is undefined (or 400 when required). */
export function strictTimeParam(query: URLSearchParams, name: string, required = false): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') {
    if (required) throw problem(400, `query parameter ${name} is required`);
    return undefined;
  }
  const ms = STRICT_TIME.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw problem(400, `query parameter ${name} must be yyyy-MM-ddTHH:mm:ss.SSSZ, got ${raw}`, [
      { field: name, message: 'invalid date-time' },
    ]);
  }
  return ms;
}

/** An ISO 8601 date-time with seconds and a zone (Z or ±hh:mm), as a JSON date-time field must be. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export function isIsoDateTime(value: string): boolean {
  return ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
}
