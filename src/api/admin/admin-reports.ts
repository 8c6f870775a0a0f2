/** Interface B reports, news items and usage details. */
import type { ApiCaller, CallOptions } from '../api-caller.js';
import type { CursorPage } from '../pagination.js';
import {
  fetchUsageDetails,
  iterateUsageDetails,
  type UsageDetailsQuery,
  type UsageEvent,
} from '../usage-api.js';
import type { NewsItemCreate, ReportCreate, ReportSearch } from './admin-bodies.js';
import {
  newsItemSchema,
  reportCreatedSchema,
  reportDownloadUrlSchema,
  reportSchema,
  reportSearchResultSchema,
  successSchema,
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

export interface AdminUsageQuery extends UsageDetailsQuery {
  /** Without it, every company the partner may see. */
  companyId?: string;
}

const USAGE_DETAILS = '/api/usage/details';

export class AdminUsageApi {
  constructor(private readonly caller: ApiCaller) {}

  details(query: AdminUsageQuery, options?: CallOptions): Promise<CursorPage<UsageEvent>> {
    return fetchUsageDetails(this.caller, USAGE_DETAILS, query, options);
  }

  iterateDetails(query: Omit<AdminUsageQuery, 'cursor'>, options?: CallOptions) {
    return iterateUsageDetails(this.caller, USAGE_DETAILS, query, options);
  }
}
