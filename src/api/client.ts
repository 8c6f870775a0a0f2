import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { healthSchema } from '../domain/wire.js';
import { CompaniesApi, DepartmentsApi, UsersApi } from './accounts-api.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { wireCaller } from './client-wiring.js';
import type { TlsExplainer } from './errors.js';
import { JobsApi } from './jobs-api.js';
import type { ApiObserver } from './observer.js';
import { PeppolApi } from './peppol-api.js';
import type { RetryPolicy } from './retry.js';
import type { Sleep } from './retry-loop.js';
import { SendingEventsApi } from './sending-events-api.js';
import type { TokenProvider } from './token-provider.js';
import { createFilesAgent, createMtlsAgent, type MtlsMaterial, type Timeouts } from './transport.js';
import { UnknownValueReporter } from './unknown-values.js';
import type { FileTransferDeps } from './upload.js';
import { UsageApi } from './usage-api.js';
import { WebhooksApi } from './webhooks-api.js';
import { WorkflowsApi } from './workflows-api.js';

export interface DocexClientOptions {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  tls: MtlsMaterial;
  clock?: Clock;
  log?: Logger;
  /** Replaces the mTLS agent of the API and token hosts (tests, proxies). */
  dispatcher?: Dispatcher;
  /** Replaces the plain TLS agent used for pre-signed upload and download URLs. */
  filesDispatcher?: Dispatcher;
  retry?: Partial<RetryPolicy>;
  timeouts?: Partial<Timeouts>;
  /** Renew the token when less than this remains (default 300 s). */
  tokenRefreshBeforeMs?: number;
  /** x-managed-company-id sent on every call unless a call names another. */
  managedCompanyId?: string;
  /** Injected wait between retries (tests). */
  sleep?: Sleep;
  /** Told of requests, token fetches and uploads (metrics). */
  observer?: ApiObserver;
}

/** Typed client of Interface A: every call carries mTLS, x-api-key and a bearer token. */
export class DocexClient {
  readonly jobs: JobsApi;
  readonly sendingEvents: SendingEventsApi;
  readonly workflows: WorkflowsApi;
  readonly peppol: PeppolApi;
  readonly companies: CompaniesApi;
  readonly departments: DepartmentsApi;
  readonly users: UsersApi;
  readonly usage: UsageApi;
  readonly webhooks: WebhooksApi;
  readonly tokens: TokenProvider;

  private readonly caller: ApiCaller;
  private readonly owned: Dispatcher[] = [];

  constructor(options: DocexClientOptions) {
    let dispatcher = options.dispatcher;
    let explainTls: TlsExplainer | undefined;
    if (!dispatcher) {
      const mtls = createMtlsAgent(options.tls, options.timeouts);
      dispatcher = this.own(mtls.dispatcher);
      explainTls = (err, url) => mtls.diagnostics.explain(err, url);
    }
    const filesDispatcher =
      options.filesDispatcher ?? this.own(createFilesAgent(options.tls.ca, options.timeouts));

    const { tokens, caller, clock, log, policy, sleep } = wireCaller(options, dispatcher, explainTls);
    this.tokens = tokens;
    this.caller = caller;
    const unknown = new UnknownValueReporter(log);
    const files: FileTransferDeps = {
      dispatcher: filesDispatcher,
      clock,
      log,
      policy,
      ...(sleep ? { sleep } : {}),
      ...(options.observer ? { observer: options.observer } : {}),
    };

    this.jobs = new JobsApi(this.caller, unknown, files);
    this.sendingEvents = new SendingEventsApi(this.caller, unknown, files);
    this.workflows = new WorkflowsApi(this.caller, unknown);
    this.peppol = new PeppolApi(this.caller, files);
    this.companies = new CompaniesApi(this.caller);
    this.departments = new DepartmentsApi(this.caller);
    this.users = new UsersApi(this.caller);
    this.usage = new UsageApi(this.caller);
    this.webhooks = new WebhooksApi(this.caller, unknown);
  }

  health(options?: CallOptions) {
    return this.caller.call({ method: 'GET', route: '/health', options }, healthSchema);
  }

  /** Closes the connection pools this client created (not injected dispatchers). */
  async close(): Promise<void> {
    await Promise.allSettled(this.owned.map((d) => d.close()));
  }

  private own(dispatcher: Dispatcher): Dispatcher {
    this.owned.push(dispatcher);
    return dispatcher;
  }
}
