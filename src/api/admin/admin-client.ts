import { rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { ApiCaller, CallOptions } from '../api-caller.js';
import { wireCaller } from '../client-wiring.js';
import type { RetryPolicy } from '../retry.js';
import type { Sleep } from '../retry-loop.js';
import type { TokenProvider } from '../token-provider.js';
import { DEFAULT_TIMEOUTS, type Pem, type Timeouts } from '../transport.js';
import { AdminNewsApi, AdminReportsApi, AdminUsageApi } from './admin-reports.js';
import { AdminCompaniesApi, AdminDepartmentsApi, AdminUsersApi } from './admin-resources.js';
import { adminInfoSchema } from './admin-schemas.js';

export interface AdminClientOptions {
  /** Base URL of Interface B (paths begin with /api). */
  apiUrl: string;
  /** OAuth2 domain of the partner-admin client; `{authUrl}/oauth2/token`. */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  /** CA of the service's server certificate; when given it is the only one trusted. */
  ca?: Pem;
  clock?: Clock;
  log?: Logger;
  /** Replaces the TLS agent (tests, proxies). */
  dispatcher?: Dispatcher;
  retry?: Partial<RetryPolicy>;
  timeouts?: Partial<Timeouts>;
  tokenRefreshBeforeMs?: number;
  /** x-managed-company-id on every call unless a call names another (not needed on Interface B). */
  managedCompanyId?: string;
  sleep?: Sleep;
}

/** Interface B has no client certificate: server TLS with a pinned CA (decisions, Authentication). */
export function createAdminAgent(ca: Pem | undefined, timeouts: Partial<Timeouts> = {}): Dispatcher {
  const t = { ...DEFAULT_TIMEOUTS, ...timeouts };
  return new Agent({
    connect: {
      ca: ca === undefined ? [...rootCertificates] : ca,
      rejectUnauthorized: true,
      timeout: t.connectMs,
    },
    headersTimeout: t.headersMs,
    bodyTimeout: t.bodyMs,
    keepAliveTimeout: t.keepAliveMs,
    connections: 8,
  });
}

/**
 * Typed client of Interface B, the partner administration API: a bearer token of the
 * partner-admin client (its own TokenProvider, not the agent's) and x-api-key on every call.
 */
export class AdminClient {
  readonly companies: AdminCompaniesApi;
  readonly departments: AdminDepartmentsApi;
  readonly users: AdminUsersApi;
  readonly reports: AdminReportsApi;
  readonly news: AdminNewsApi;
  readonly usage: AdminUsageApi;
  readonly tokens: TokenProvider;

  private readonly caller: ApiCaller;
  private readonly owned: Dispatcher | undefined;

  constructor(options: AdminClientOptions) {
    this.owned = options.dispatcher ? undefined : createAdminAgent(options.ca, options.timeouts);
    const { tokens, caller } = wireCaller(options, options.dispatcher ?? (this.owned as Dispatcher));
    this.tokens = tokens;
    this.caller = caller;
    this.companies = new AdminCompaniesApi(this.caller);
    this.departments = new AdminDepartmentsApi(this.caller);
    this.users = new AdminUsersApi(this.caller);
    this.reports = new AdminReportsApi(this.caller);
    this.news = new AdminNewsApi(this.caller);
    this.usage = new AdminUsageApi(this.caller);
  }

  /** GET /api: `{name, version}`. */
  info(options?: CallOptions) {
    return this.caller.call({ method: 'GET', route: '/api', options }, adminInfoSchema);
  }

  /** Closes the connection pool this client created (not an injected dispatcher). */
  async close(): Promise<void> {
    await this.owned?.close();
  }
}
