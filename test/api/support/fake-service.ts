import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { DocexClient, type DocexClientOptions } from '../../../src/api/client.js';
import type { TestPki } from './pki.js';
import { json, problem, startMtlsServer, type TestServer } from './test-server.js';

export const CLIENT_ID = 'client-test-1';
export const CLIENT_SECRET = 'cs-SECRET-7f3a9b2c4d5e6f708192';
export const API_KEY = 'ak-APIKEY-0a1b2c3d4e5f60718293';

export interface RecordedCall {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, call: RecordedCall, n: number) => void;

/**
 * A stand-in for the service's API and token hosts on one mTLS server: tokens are issued and
 * checked, x-api-key is checked, and each test registers the routes it needs.
 */
export class FakeService {
  tokenRequests = 0;
  readonly issued: string[] = [];
  readonly calls: RecordedCall[] = [];
  expiresIn = 3600;
  /** Delay of the token answer, to make concurrent callers overlap. */
  tokenDelayMs = 0;
  /** When set, answers token requests instead (an outage, an echoing proxy). */
  tokenOverride: ((res: ServerResponse, call: RecordedCall) => void) | undefined;
  private readonly valid = new Set<string>();
  private readonly routes = new Map<string, { handler: RouteHandler; count: number }>();

  private constructor(readonly server: TestServer) {}

  static async start(pki: TestPki): Promise<FakeService> {
    let self: FakeService | undefined;
    const server = await startMtlsServer(pki, (req, res, body) => self!.handle(req, res, body));
    self = new FakeService(server);
    return self;
  }

  get url(): string {
    return this.server.url;
  }

  on(method: string, path: string, handler: RouteHandler): this {
    this.routes.set(`${method} ${path}`, { handler, count: 0 });
    return this;
  }

  revokeAll(): void {
    this.valid.clear();
  }

  apiCalls(path?: string): RecordedCall[] {
    return this.calls.filter((c) => c.path !== '/oauth2/token' && (path === undefined || c.path === path));
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', 'https://x');
    const call: RecordedCall = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body: body.toString('utf8'),
    };
    this.calls.push(call);
    if (call.path === '/oauth2/token') {
      this.token(res, call);
      return;
    }
    if (req.headers['x-api-key'] !== API_KEY) {
      problem(res, 403, 'Forbidden', 'missing or wrong x-api-key');
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !this.valid.has(bearer)) {
      problem(res, 401, 'Unauthorized', 'missing, invalid or expired token');
      return;
    }
    const route = this.routes.get(`${call.method} ${call.path}`);
    if (!route) {
      problem(res, 404, 'Not Found', `no route ${call.method} ${call.path}`);
      return;
    }
    route.count += 1;
    route.handler(req, res, call, route.count);
  }

  private token(res: ServerResponse, call: RecordedCall): void {
    this.tokenRequests += 1;
    if (this.tokenOverride) {
      this.tokenOverride(res, call);
      return;
    }
    const form = new URLSearchParams(call.body);
    if (
      call.headers['content-type'] !== 'application/x-www-form-urlencoded' ||
      form.get('grant_type') !== 'client_credentials' ||
      form.get('client_id') !== CLIENT_ID ||
      form.get('client_secret') !== CLIENT_SECRET
    ) {
      json(res, 401, { error: 'invalid_client' });
      return;
    }
    const token = `tok-${randomBytes(12).toString('hex')}`;
    this.issued.push(token);
    this.valid.add(token);
    setTimeout(
      () => json(res, 200, { access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' }),
      this.tokenDelayMs,
    );
  }
}

/** A client of the fake service with fast, deterministic retries. */
export function fakeClient(
  fake: FakeService,
  pki: TestPki,
  overrides: Partial<DocexClientOptions> = {},
): DocexClient {
  return new DocexClient({
    apiUrl: fake.url,
    authUrl: fake.url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    apiKey: API_KEY,
    tls: { ca: pki.caCertPem, cert: pki.client.certPem, key: pki.client.keyPem },
    retry: { baseDelayMs: 5, maxDelayMs: 2_000, random: () => 0.5 },
    ...overrides,
  });
}

export const JOB = {
  id: 'job_1',
  name: 'invoice.pdf',
  workflowId: 'wf_pdf_email',
  status: 'PROCESSING',
  startDate: '2026-11-21T10:00:00.000Z',
};
