/** Interface B reports, news items and usage details. */
import type { ApiCaller, CallOptions } from '../api-caller.js';
import { type CursorPage, iterateCursor } from '../pagination.js';
import { type DateInput, formatDateTime } from '../query.js';
import type { UsageEvent } from '../usage-api.js';
import type { NewsItemCreate, ReportCreate, ReportSearch } from './admin-bodies.js';
import {
  newsItemSchema,
  reportCreatedSchema,
  reportDownloadUrlSchema,
  reportSchema,
  reportSearchResultSchema,
  successSchema,
  usageDetailsPageSchema,
} from './admin-schemas.js';

const REPORTS = '/api/company/{companyId}/reports';

export class AdminReportsApi {
  constructor(private readonly caller: ApiCaller) {}

  /** 201: `{id, url, expiresAt}`; the URL is pre-signed (a secret until it expires). */
  create(companyId: string, body: ReportCreate, options?: CallOptions) {
    return this.caller.call(
      { method: 'POST', route: REPORTS, params: { companyId }, body, options },
      reportCreatedSchema,
    );
  }

  get(companyId: string, id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'GET', route: `${REPORTS}/{id}`, params: { companyId, id }, options },
      reportSchema,
    );
  }

  delete(companyId: string, id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'DELETE', route: `${REPORTS}/{id}`, params: { companyId, id }, options },
      successSchema,
    );
  }

  /** A search changes nothing, so it is retried like a GET. */
  async search(companyId: string, criteria: ReportSearch = {}, options?: CallOptions) {
    const result = await this.caller.call(
      {
        method: 'POST',
        route: `${REPORTS}/search`,
        params: { companyId },
        body: criteria,
        retryable: true,
        options,
      },
      reportSearchResultSchema,
    );
    return result.items;
  }

  /** The pre-signed URL of the report's CSV (the service answers a bare string). */
  downloadUrl(companyId: string, id: string, options?: CallOptions): Promise<string> {
    return this.caller.call(
      { method: 'GET', route: `${REPORTS}/{id}/download-url`, params: { companyId, id }, options },
      reportDownloadUrlSchema,
    );
  }
}

export class AdminNewsApi {
  constructor(private readonly caller: ApiCaller) {}

  create(body: NewsItemCreate, options?: CallOptions) {
    return this.caller.call({ method: 'POST', route: '/api/news-items', body, options }, newsItemSchema);
  }

  delete(id: string, options?: CallOptions) {
    return this.caller.call(
      { method: 'DELETE', route: '/api/news-items/{id}', params: { id }, options },
      successSchema,
    );
  }
}

export interface AdminUsageQuery {
  from: DateInput;
  /** Exclusive end. */
  until: DateInput;
  /** Without it, every company the partner may see. */
  companyId?: string;
  departmentIds?: string[];
  cursor?: string;
  maxItems?: number;
}

export class AdminUsageApi {
  constructor(private readonly caller: ApiCaller) {}

  async details(query: AdminUsageQuery, options?: CallOptions): Promise<CursorPage<UsageEvent>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/api/usage/details',
        query: {
          from: formatDateTime(query.from, 'from'),
          until: formatDateTime(query.until, 'until'),
          companyId: query.companyId,
          departmentIds: query.departmentIds,
          cursor: query.cursor,
          maxItems: query.maxItems,
        },
        options,
      },
      usageDetailsPageSchema,
    );
    return { items: page.items, nextCursor: page.nextCursor ?? undefined };
  }

  iterateDetails(query: Omit<AdminUsageQuery, 'cursor'>, options?: CallOptions) {
    return iterateCursor<UsageEvent>(
      (cursor) => this.details({ ...query, ...(cursor ? { cursor } : {}) }, options),
      { route: '/api/usage/details' },
    );
  }
}
