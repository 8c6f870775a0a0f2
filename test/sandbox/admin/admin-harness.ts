/**
 * A real sandbox in a temp folder and a raw caller for its Interface B host: server TLS only (no
 * client certificate), a partner-admin token from the admin host, and x-api-key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { silentLogger } from '../../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../../src/sandbox/index.js';

export interface AdminAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  body: any;
  text: string;
}

export interface AdminHarness {
  sandbox: RunningSandbox;
  /** TLS without a client certificate, trusting the sandbox CA. */
  agent: Agent;
  token(clientId?: string, clientSecret?: string): Promise<AdminAnswer>;
  call(
    method: string,
    pathAndQuery: string,
    options?: { body?: unknown; headers?: Record<string, string>; bearer?: string },
  ): Promise<AdminAnswer>;
  get(url: string): Promise<AdminAnswer>;
  stop(): Promise<void>;
}

async function read(res: Awaited<ReturnType<typeof request>>): Promise<AdminAnswer> {
  const text = await res.body.text();
  const type = String(res.headers['content-type'] ?? '');
  return { status: res.statusCode, text, body: type.includes('json') && text ? JSON.parse(text) : text };
}

export async function startAdminHarness(): Promise<AdminHarness> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'docex-admin-'));
  const sandbox = await startSandbox({ stateDir, log: silentLogger() });
  const c = sandbox.credentials;
  const agent = new Agent({ connect: { ca: c.caCertPem } });
  const admin = sandbox.urls.admin ?? '';

  const token = async (clientId = c.admin.clientId, clientSecret = c.admin.clientSecret) =>
    read(
      await request(`${admin}/oauth2/token`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
        }).toString(),
      }),
    );
  const first = await token();
  const bearer = first.body.access_token as string;

  return {
    sandbox,
    agent,
    token,
    async call(method, pathAndQuery, options = {}) {
      return read(
        await request(`${admin}${pathAndQuery}`, {
          method: method as 'GET',
          dispatcher: agent,
          headers: {
            authorization: `Bearer ${options.bearer ?? bearer}`,
            'x-api-key': c.apiKey,
            ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...options.headers,
          },
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        }),
      );
    },
    async get(url) {
      return read(await request(url, { dispatcher: agent }));
    },
    async stop() {
      await sandbox.stop();
      await agent.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

export const address = {
  street: 'Kerkstraat',
  streetNr: '1',
  postalCode: '9000',
  city: 'Gent',
  countryCode: 'BE',
};

/** Valid create bodies of Interface B, one per resource. */
export function companyBody() {
  return {
    erpId: 'ERP-B-1',
    name: 'Client via B',
    headAddress: address,
    isActive: true,
    identifiers: [{ type: 'VAT_NUMBER', value: 'BE0111222333' }],
  };
}

export function departmentBody(companyId: string) {
  return {
    companyId,
    erpId: 'ERP-DEP-B',
    name: 'Sales',
    headAddress: address,
    hasSeparateInvoicing: true,
    isActive: true,
  };
}

export function userBody(companyId: string, departments: string[]) {
  return {
    companyId,
    username: 'new.user@client.example',
    role: 'SUPER_USER',
    departments,
    firstName: 'Nora',
    lastName: 'New',
    preferredLanguage: 'NL',
    emailAddress: 'new.user@client.example',
    hasMFALoginEnabled: true,
    hasQERDSMandate: false,
    modulesAccess: ['SERVICE_CONNECT', 'OMNI'],
    lastModifiedBy: 'admin@partner.example',
    enabled: true,
  };
}

/** Usage events written straight into the store (the lifecycle writes them the same way). */
export function addUsageEvents(
  sandbox: RunningSandbox,
  companyId: string,
  count: number,
  start: string,
  departmentId?: string,
): string[] {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = sandbox.ctx.newId('use');
    sandbox.ctx.store.insert(
      'usage-event',
      {
        id,
        timestamp: new Date(Date.parse(start) + i * 1000).toISOString(),
        companyId,
        ...(departmentId ? { departmentId } : {}),
        jobId: `job_${i}`,
        sendingEventId: `se_${i}`,
        channel: i % 2 === 0 ? 'EMAIL' : 'EASY_PRINT',
        unit: 'SENDING',
        quantity: 1,
      },
      { companyId },
    );
    ids.push(id);
  }
  return ids;
}
