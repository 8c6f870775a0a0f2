/**
 * The operations listener (node:http, no TLS: loopback by default): GET /healthz (the process
 * answers), /readyz (runs the readiness checks: 200 or 503 with one entry per check) and /metrics
 * (Prometheus text). Anything else is 404; other methods than GET and HEAD are 405.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ReadinessReport } from './readiness.js';

export interface OpsHandlers {
  /** Undefined while the agent is still starting (readyz answers 503). */
  readiness(): Promise<ReadinessReport | undefined>;
  /** Undefined when metrics are off (404). */
  metrics?: () => Promise<{ text: string; contentType: string }>;
}

export interface OpsServer {
  /** `http://host:port`, with the port actually bound. */
  url: string;
  port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value)}\n`);

async function handle(req: IncomingMessage, res: ServerResponse, handlers: OpsHandlers): Promise<void> {
  const route = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    json(res, 405, { error: 'method not allowed' });
    return;
  }
  if (route === '/healthz') {
    json(res, 200, { status: 'ok' });
  } else if (route === '/readyz') {
    const report = await handlers.readiness();
    if (!report) json(res, 503, { ready: false, checks: {}, detail: 'starting' });
    else json(res, report.ready ? 200 : 503, report);
  } else if (route === '/metrics' && handlers.metrics) {
    const { text, contentType } = await handlers.metrics();
    send(res, 200, contentType, text);
  } else {
    json(res, 404, { error: 'not found', endpoints: ['/healthz', '/readyz', '/metrics'] });
  }
}

export async function startOpsServer(
  listen: { host: string; port: number },
  handlers: OpsHandlers,
  log: Logger,
): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res, handlers).catch((err: unknown) => {
      log.error({ err, route: req.url }, 'ops endpoint failed');
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  // Scrapers keep connections open; nothing here is slow enough to need long timeouts.
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new DocexError(
          'DOCEX_OPS_LISTEN',
          `cannot listen on ${listen.host}:${listen.port} for /healthz, /readyz and /metrics (${err.code ?? err.message}); change ops.listen or set ops.enabled: false`,
          { cause: err, details: { host: listen.host, port: listen.port } },
        ),
      ),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
