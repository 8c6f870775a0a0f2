/**
 * A real sandbox (startSandbox) in a temp folder and a small mTLS caller for its API host, shared
 * by the S2 route tests: token from the auth host, x-api-key, optional x-managed-company-id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  body: any;
  text: string;
}

export interface Harness {
  sandbox: RunningSandbox;
  agent: Agent;
  call(
    method: string,
    pathAndQuery: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<ApiAnswer>;
  stop(): Promise<void>;
}

export async function startHarness(options: Partial<SandboxOptions> = {}): Promise<Harness> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'docex-s2-'));
  const sandbox = await startSandbox({ stateDir, log: silentLogger(), ...options });
  const { caCertPem, clientCertPem, clientKeyPem, clientId, clientSecret, apiKey } = sandbox.credentials;
  const agent = new Agent({ connect: { ca: caCertPem, cert: clientCertPem, key: clientKeyPem } });

  const tokenRes = await request(`${sandbox.urls.auth}/oauth2/token`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  });
  const token = ((await tokenRes.body.json()) as { access_token: string }).access_token;

  const call: Harness['call'] = async (method, pathAndQuery, opts = {}) => {
    const res = await request(`${sandbox.urls.api}${pathAndQuery}`, {
      method: method as 'GET',
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${token}`,
        'x-api-key': apiKey,
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    const text = await res.body.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body, text };
  };

  return {
    sandbox,
    agent,
    call,
    stop: async () => {
      await sandbox.stop();
      await agent.close();
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
