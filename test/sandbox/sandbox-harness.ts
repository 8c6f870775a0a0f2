/**
 * A real sandbox over real HTTPS + mTLS in a temp folder, with a ManualClock underneath the
 * sandbox clock so only the test moves time. Helpers call the three hosts the way the agent does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  body: any;
  raw: Buffer;
}

export interface TestSandbox {
  sandbox: RunningSandbox;
  stateDir: string;
  mtls: Agent;
  plain: Agent;
  token(): Promise<string>;
  api(
    method: string,
    pathAndQuery: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Answer>;
  /** Any URL on the files host (pre-signed or control), without client certificate. */
  files(
    method: string,
    url: string,
    options?: { body?: Buffer | string; headers?: Record<string, string> },
  ): Promise<Answer>;
  control(method: string, pathAndQuery: string, body?: unknown): Promise<Answer>;
  advance(ms: number): Promise<void>;
  stop(options?: { keepState?: boolean }): Promise<void>;
}

async function answer(res: Awaited<ReturnType<typeof request>>): Promise<Answer> {
  const raw = Buffer.from(await res.body.arrayBuffer());
  const type = String(res.headers['content-type'] ?? '');
  const body =
    type.includes('json') && raw.length > 0 ? JSON.parse(raw.toString('utf8')) : raw.toString('utf8');
  return { status: res.statusCode, headers: res.headers, body, raw };
}

export async function startTestSandbox(
  options: Partial<SandboxOptions> & { stateDir?: string } = {},
): Promise<TestSandbox> {
  const stateDir = options.stateDir ?? mkdtempSync(path.join(os.tmpdir(), 'docex-s1-'));
  const clock = options.clock ?? new ManualClock(Date.now());
  const sandbox = await startSandbox({
    log: silentLogger(),
    speed: 1000,
    tickIntervalMs: 20,
    ...options,
    stateDir,
    clock,
  });
  const c = sandbox.credentials;
  const mtls = new Agent({ connect: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem } });
  const plain = new Agent({ connect: { ca: c.caCertPem } });
  let cached: string | undefined;

  const token = async () => {
    const res = await request(`${sandbox.urls.auth}/oauth2/token`, {
      method: 'POST',
      dispatcher: mtls,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.clientSecret,
      }).toString(),
    });
    const a = await answer(res);
    if (a.status !== 200) throw new Error(`token request answered ${a.status}`);
    return a.body.access_token as string;
  };

  const t: TestSandbox = {
    sandbox,
    stateDir,
    mtls,
    plain,
    token,
    async api(method, pathAndQuery, opts = {}) {
      const send = async (bearer: string) =>
        answer(
          await request(`${sandbox.urls.api}${pathAndQuery}`, {
            method: method as 'GET',
            dispatcher: mtls,
            headers: {
              authorization: `Bearer ${bearer}`,
              'x-api-key': c.apiKey,
              ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
              ...opts.headers,
            },
            ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
          }),
        );
      cached ??= await token();
      const first = await send(cached);
      if (first.status !== 401) return first;
      // The sandbox clock may have passed the token's hour: renew once, as the agent does.
      cached = await token();
      return send(cached);
    },
    async files(method, url, opts = {}) {
      const res = await request(url, {
        method: method as 'GET',
        dispatcher: plain,
        ...(opts.headers ? { headers: opts.headers } : {}),
        ...(opts.body !== undefined ? { body: opts.body } : {}),
      });
      return answer(res);
    },
    async control(method, pathAndQuery, body) {
      return t.files(method, `${sandbox.urls.control}${pathAndQuery}`, {
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
          : {}),
      });
    },
    async advance(ms) {
      sandbox.advanceClock(ms);
      await sandbox.settle();
    },
    async stop(opts = {}) {
      await sandbox.stop();
      await mtls.close();
      await plain.close();
      if (!opts.keepState) rmSync(stateDir, { recursive: true, force: true });
    },
  };
  return t;
}

/** Polls until `check` returns a value (the sandbox finalises events asynchronously). */
export async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
