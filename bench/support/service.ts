/**
 * Direct access to the sandbox for the comparison columns: the secrets come from the files the
 * sandbox wrote for the agent (never from argv or the environment), one token per run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { Agent, request } from 'undici';
import { parse, stringify } from 'yaml';
import type { SandboxInfo } from './processes.js';

export interface SecretFiles {
  clientSecretFile: string;
  apiKeyFile: string;
}

/** The `${file:…}` references of the sandbox's agent-config fragment. */
export function secretFiles(info: SandboxInfo): SecretFiles {
  const fragment = parse(readFileSync(info.paths.agentConfigFragment, 'utf8')) as {
    service: { clientSecret: string; apiKey: string };
  };
  const fileOf = (ref: string) => /^\$\{file:(.+)\}$/.exec(ref)?.[1] ?? '';
  return {
    clientSecretFile: fileOf(fragment.service.clientSecret),
    apiKeyFile: fileOf(fragment.service.apiKey),
  };
}

/**
 * An agent configuration in `dir` (`name`, default agent.yaml): the sandbox's fragment (service,
 * secrets as file references), the state folder `./state`, then `config`. Answers its path.
 */
export function agentConfigFile(dir: string, info: SandboxInfo, config: object, name = 'agent.yaml'): string {
  const fragment = parse(readFileSync(info.paths.agentConfigFragment, 'utf8')) as object;
  const file = path.join(dir, name);
  writeFileSync(file, stringify({ ...fragment, stateDir: './state', ...config }));
  return file;
}

/** A bare keep-alive client doing only token, create and PUT: the ceiling column. */
export class RawClient {
  private readonly mtls: Agent;
  private readonly plain: Agent;
  private token = '';
  private readonly apiKey: string;
  private readonly clientSecret: string;

  constructor(
    private readonly info: SandboxInfo,
    connections: number,
  ) {
    const ca = readFileSync(info.paths.caCert);
    const secrets = secretFiles(info);
    this.apiKey = readFileSync(secrets.apiKeyFile, 'utf8');
    this.clientSecret = readFileSync(secrets.clientSecretFile, 'utf8');
    this.mtls = new Agent({
      connect: {
        secureContext: createSecureContext({
          ca,
          cert: readFileSync(info.paths.clientCert),
          key: readFileSync(info.paths.clientKey),
        }),
      },
      connections,
    });
    this.plain = new Agent({ connect: { secureContext: createSecureContext({ ca }) }, connections });
  }

  async fetchToken(): Promise<void> {
    const res = await request(`${this.info.urls.auth}/oauth2/token`, {
      dispatcher: this.mtls,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: this.info.clientId,
        client_secret: this.clientSecret,
      }).toString(),
    });
    const body = (await res.body.json()) as { access_token?: string };
    if (res.statusCode !== 200 || !body.access_token) throw new Error(`token: HTTP ${res.statusCode}`);
    this.token = body.access_token;
  }

  async createSingleFile(workflowId: string, filename: string): Promise<{ id: string; url: string }> {
    const res = await request(`${this.info.urls.api}/jobs/single-file`, {
      dispatcher: this.mtls,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': this.apiKey,
        authorization: `Bearer ${this.token}`,
      },
      body: JSON.stringify({ workflowId, filename }),
    });
    const body = (await res.body.json()) as { id?: string; fileUploadUrl?: string };
    if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`create: HTTP ${res.statusCode}`);
    return { id: body.id ?? '', url: body.fileUploadUrl ?? '' };
  }

  async put(url: string, body: Buffer): Promise<void> {
    const res = await request(url, {
      dispatcher: this.plain,
      method: 'PUT',
      headers: { 'content-length': String(body.length), 'content-type': 'application/octet-stream' },
      body,
    });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`PUT: HTTP ${res.statusCode}`);
  }

  async close(): Promise<void> {
    await Promise.all([this.mtls.close(), this.plain.close()]);
  }
}
