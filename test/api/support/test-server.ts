import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TestPki } from './pki.js';

export type TestHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

export interface TestServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Reads the whole body first unless the handler is marked `streaming`. */
function wrap(handler: TestHandler, streaming: boolean) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (streaming) {
        await handler(req, res, Buffer.alloc(0));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      await handler(req, res, Buffer.concat(chunks));
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    }
  };
}

async function listen(server: Server, protocol: 'http' | 'https'): Promise<TestServer> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${protocol}://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** HTTPS with mandatory client certificates from the test CA, like the service's API host. */
export function startMtlsServer(pki: TestPki, handler: TestHandler, streaming = false): Promise<TestServer> {
  const server = createHttpsServer(
    {
      key: pki.server.keyPem,
      cert: pki.server.certPem,
      ca: pki.caCertPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    wrap(handler, streaming),
  );
  return listen(server, 'https');
}

/** HTTPS without client certificates, like the pre-signed files host. */
export function startTlsServer(pki: TestPki, handler: TestHandler, streaming = false): Promise<TestServer> {
  const server = createHttpsServer(
    { key: pki.server.keyPem, cert: pki.server.certPem },
    wrap(handler, streaming),
  );
  return listen(server, 'https');
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function problem(res: ServerResponse, status: number, title: string, detail?: string, headers = {}) {
  const text = JSON.stringify({ type: 'about:blank', title, status, ...(detail ? { detail } : {}) });
  res.writeHead(status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
