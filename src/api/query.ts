import { API_ERROR_CODES, ApiError } from './errors.js';

export type DateInput = Date | string | number;
export type QueryValue = string | number | boolean | undefined | null | readonly string[];
export type Query = Record<string, QueryValue>;

/** A calendar date, read as UTC midnight (as ECMAScript reads it). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** A date-time that names its offset: `Z`, `+01:00` or `+0100`. */
const ISO_DATE_TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** False for `2026-02-30`, which Date.parse would quietly turn into 2 March. */
function isRealCalendarDate(text: string): boolean {
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

function invalidDate(field: string, why: string): ApiError {
  return new ApiError(API_ERROR_CODES.invalidArgument, `${field} ${why}`, { method: '-', route: '-' });
}

/**
 * The wire format of date-time query values: `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` (UTC). A string must
 * be ISO 8601. A date-time without an offset is refused rather than guessed: Date.parse would
 * read it in the host's time zone, so the same filter would select other jobs on another server.
 */
export function formatDateTime(value: DateInput, field = 'date'): string {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'number') ms = value;
  else {
    const text = value.trim();
    if (!ISO_DATE.test(text) && !ISO_DATE_TIME_WITH_OFFSET.test(text)) {
      throw invalidDate(field, 'is not an ISO 8601 date or a date-time with Z or an offset');
    }
    ms = isRealCalendarDate(text) ? Date.parse(text) : Number.NaN;
  }
  if (!Number.isFinite(ms)) throw invalidDate(field, 'is not a date-time');
  return new Date(ms).toISOString();
}

export function optionalDateTime(value: DateInput | undefined, field: string): string | undefined {
  return value === undefined ? undefined : formatDateTime(value, field);
}

/** Query string without the leading `?`; undefined values are left out, arrays repeat the key. */
export function buildQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  return params.toString();
}

/** `/jobs/{id}` with `{id}` filled in, each value percent-encoded. */
export function fillRoute(route: string, params: Record<string, string> = {}): string {
  return route.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') {
      throw new ApiError(API_ERROR_CODES.invalidArgument, `missing path parameter ${name}`, {
        method: '-',
        route,
      });
    }
    return encodeURIComponent(value);
  });
}

/** Joins a base URL (which may carry a path prefix) and a path. */
export function joinUrl(base: string, path: string, query = ''): string {
  const trimmed = base.endsWith('/') ? base.slice(0, -1) : base;
  return `${trimmed}${path}${query ? `?${query}` : ''}`;
}
