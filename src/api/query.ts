import { API_ERROR_CODES, ApiError } from './errors.js';

export type DateInput = Date | string | number;
export type QueryValue = string | number | boolean | undefined | null | readonly string[];
export type Query = Record<string, QueryValue>;

/** The wire format of date-time query values: `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` (UTC). */
export function formatDateTime(value: DateInput, field = 'date'): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new ApiError(API_ERROR_CODES.invalidArgument, `${field} is not a date-time`, {
      method: '-',
      route: '-',
    });
  }
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
