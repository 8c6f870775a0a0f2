/**
 * A load balancer that duplicates webhook deliveries, for the chaos runs: a plain HTTP server the
 * sandbox's subscription points at, which forwards each delivery's exact bytes and signed headers
 * to every backend (one per agent slot) at once, and answers the sender with the best of their
 * answers (any 2xx; else the first error status; 502 when no backend answered). A slot whose agent
 * is dead or not started yet answers nothing (0). Every answer is recorded per webhook id, so a
 * run can tell a delivery accepted by two agents (two 202s for one id, across all attempts).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** The headers a Standard Webhooks receiver reads, forwarded as they came. */
const FORWARDED = ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];
/** Below the sender's own 15 s: the sender always gets an answer from this proxy. */
const BACKEND_TIMEOUT_MS = 10_000;

export interface BackendAnswer {
  slot: number;
  /** HTTP status; 0: no answer (refused, reset, timed out). */
  status: number;
  /** The receiver's `status` field (accepted, duplicate), when it answered JSON. */
  said?: string | undefined;
}

export interface FanoutStats {
  /** Requests from the sender (attempts, retries included). */
  requests: number;
  /** Distinct webhook ids. */
  deliveries: number;
  /** Attempts on which every slot answered something (both agents got the same delivery at once). */
  reachedAll: number;
  /** Attempts answered to the sender with a 2xx. */
  acknowledged: number;
  /** Attempts answered with an error (the sender retries). */
  refused: number;
}

export interface WebhookFanout {
  url: string;
  /** Points a slot at an agent's receiver; undefined: the slot's agent is gone. */
  setBackend(slot: number, url: string | undefined): void;
  /** Every backend answer per webhook id, in arrival order. */
  answers(): ReadonlyMap<string, readonly BackendAnswer[]>;
  stats(): FanoutStats;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function forward(
  url: string | undefined,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; said?: string }> {
  if (!url) return { status: 0 };
  try {
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      headersTimeout: BACKEND_TIMEOUT_MS,
      bodyTimeout: BACKEND_TIMEOUT_MS,
      signal: AbortSignal.timeout(BACKEND_TIMEOUT_MS),
    });
    const text = await res.body.text().catch(() => '');
    let said: string | undefined;
    try {
      const parsed = JSON.parse(text) as { status?: unknown };
      said = typeof parsed.status === 'string' ? parsed.status : undefined;
    } catch {
      said = undefined;
    }
    return { status: res.statusCode, ...(said ? { said } : {}) };
  } catch {
    return { status: 0 };
  }
}

/** The answer to give the sender: a 2xx when any backend acknowledged, else an error. */
export function bestAnswer(statuses: readonly number[]): number {
  const ok = statuses.filter((s) => s >= 200 && s < 300);
  // 202 (accepted) before 200 (a duplicate): what the agent that did the work said.
  if (ok.length > 0) return Math.max(...ok);
  return statuses.find((s) => s !== 0) ?? 502;
}

export async function startWebhookFanout(slots: number): Promise<WebhookFanout> {
  const backends: (string | undefined)[] = Array.from({ length: slots }, () => undefined);
  const answers = new Map<string, BackendAnswer[]>();
  const stats: FanoutStats = { requests: 0, deliveries: 0, reachedAll: 0, acknowledged: 0, refused: 0 };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    stats.requests++;
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const id = headers['webhook-id'] ?? '';
    if (!answers.has(id)) {
      answers.set(id, []);
      stats.deliveries++;
    }
    const got = await Promise.all(backends.map((url) => forward(url, headers, body)));
    const list = answers.get(id)!;
    for (const [slot, a] of got.entries()) list.push({ slot, ...a });
    if (got.every((a) => a.status !== 0)) stats.reachedAll++;
    const status = bestAnswer(got.map((a) => a.status));
    if (status >= 200 && status < 300) stats.acknowledged++;
    else stats.refused++;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: status >= 200 && status < 300 ? 'forwarded' : 'no-backend' }));
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/docex/webhooks`,
    setBackend(slot, url) {
      backends[slot] = url;
    },
    answers: () => answers,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
