import { rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { type Clock, systemClock } from '../../core/clock.js';
import { type Logger, silentLogger } from '../../core/logger.js';
import { ApiCaller, type CallOptions } from '../api-caller.js';
import { type RetryPolicy, retryPolicy } from '../retry.js';
import type { Sleep } from '../retry-loop.js';
import { TokenProvider } from '../token-provider.js';
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
    const clock = options.clock ?? systemClock;
    const log = options.log ?? silentLogger();
    const policy = retryPolicy(options.retry);
    const sleep = options.sleep;
    this.owned = options.dispatcher ? undefined : createAdminAgent(options.ca, options.timeouts);
    const dispatcher = options.dispatcher ?? (this.owned as Dispatcher);

    this.tokens = new TokenProvider({
      authUrl: options.authUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      dispatcher,
      clock,
      log,
      policy,
      ...(options.tokenRefreshBeforeMs === undefined
        ? {}
        : { refreshBeforeMs: options.tokenRefreshBeforeMs }),
      ...(sleep ? { sleep } : {}),
    });
    this.caller = new ApiCaller({
      apiUrl: options.apiUrl,
      apiKey: options.apiKey,
      tokens: this.tokens,
      dispatcher,
      clock,
      log,
      policy,
      ...(options.managedCompanyId ? { defaultManagedCompanyId: options.managedCompanyId } : {}),
      ...(sleep ? { sleep } : {}),
    });
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
