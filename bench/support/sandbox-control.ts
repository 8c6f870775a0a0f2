/** The sandbox's control API (/_sandbox/ on the files host, server TLS only) for scenario set-up. */
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { Agent, request } from 'undici';
import type { SandboxInfo } from './processes.js';

export interface SandboxState {
  counts: Record<string, number>;
  sendingEvents: { active: number; byBusinessStatus: Record<string, number> };
}

export interface SandboxJob {
  id: string;
  workflowId: string;
  status: string;
  sendingEventCount: number;
}

export class SandboxControl {
  private readonly agent: Agent;

  constructor(
    private readonly info: SandboxInfo,
    connections: number,
  ) {
    const ca = readFileSync(info.paths.caCert);
    // Moving the clock waits for every proof the sandbox renders: minutes for 10,000 events.
    this.agent = new Agent({
      connect: { secureContext: createSecureContext({ ca }) },
      connections,
      headersTimeout: 30 * 60_000,
      bodyTimeout: 30 * 60_000,
    });
  }

  private async call<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
    const res = await request(`${this.info.urls.control}${route}`, {
      dispatcher: this.agent,
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} /_sandbox${route}: HTTP ${res.statusCode} ${text}`);
    return JSON.parse(text) as T;
  }

  state(): Promise<SandboxState> {
    return this.call('GET', '/state');
  }

  async jobs(): Promise<SandboxJob[]> {
    return (await this.call<{ items: SandboxJob[] }>('GET', '/jobs')).items;
  }

  async advanceClock(ms: number): Promise<void> {
    await this.call('POST', '/clock/advance', { ms });
  }

  /** A fault rule (src/sandbox/faults.ts), e.g. `{ route: '/upload/:jobId', latencyMs: 25 }`. */
  async addFault(fault: {
    route: string;
    method?: string;
    latencyMs?: number;
    burst429?: { count: number; retryAfterSeconds: number };
    errorRate?: number;
    status?: number;
  }): Promise<void> {
    await this.call('POST', '/faults', fault);
  }

  async addPeppolDocument(xml: string): Promise<void> {
    await this.call('POST', '/peppol-documents', { xml });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
