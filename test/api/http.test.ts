import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, type HttpPort, type HttpRequest, send } from '../../src/api/http.js';
import type { ApiObserver } from '../../src/api/observer.js';
import { ManualClock } from '../../src/core/clock.js';
import { DocexError } from '../../src/core/errors.js';
import { caught } from './support/caught.js';
import { captureLogger } from './support/log-capture.js';

const SECRET = 'sk-live-7e1f0c9a8b7d6e5f';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

describe('the one HTTP pipeline every request of the clients goes through', () => {
  let base = '';
  let handler: Handler = (_req, res) => res.end();
  const seen: { method: string | undefined; url: string | undefined; header?: string; body: string }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, header: req.headers['x-test'] as string, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // One connection: a body left unread would hold it, and the next request would wait.
  const dispatcher = new Agent({ connections: 1 });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await dispatcher.close();
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  function port(events: Parameters<NonNullable<ApiObserver['request']>>[0][] = []): HttpPort {
    return { dispatcher, clock: new ManualClock(), observer: { request: (e) => events.push(e) } };
  }

  function req(over: Partial<HttpRequest> & Pick<HttpRequest, 'url' | 'log'>): HttpRequest {
    return { method: 'GET', route: '/jobs/{id}', secrets: [SECRET], ...over };
  }

  it('sends method, path with query, headers and body on the given dispatcher and answers status and text', async () => {
    handler = (_req, res, body) => res.writeHead(201).end(`got ${body.length}`);
    const { log } = captureLogger();
    const answer = await exchange(
      port(),
      req({
        url: `${base}/jobs/j%201?after=x&limit=2`,
        log,
        method: 'PUT',
        headers: { 'x-test': 'yes', 'content-type': 'text/plain' },
        body: 'hello',
      }),
    );
    expect(answer.status).toBe(201);
    expect(answer.text).toBe('got 5');
    expect(seen.at(-1)).toEqual({
      method: 'PUT',
      url: '/jobs/j%201?after=x&limit=2',
      header: 'yes',
      body: 'hello',
    });
  });

  it('tells the observer of each request and writes its debug line with the route, never the URL', async () => {
    handler = (_req, res) => res.writeHead(404).end('none');
    const events: Parameters<NonNullable<ApiObserver['request']>>[0][] = [];
    const { log, lines, raw } = captureLogger();
    const answer = await exchange(
      port(events),
      req({ url: `${base}/jobs/j_secret-id?sig=${SECRET}`, log, fields: { attempt: 2 } }),
    );
    expect(answer.status).toBe(404);
    expect(events).toEqual([
      { method: 'GET', route: '/jobs/{id}', status: 404, seconds: expect.any(Number) },
    ]);
    expect(lines()).toEqual([
      expect.objectContaining({
        msg: 'api request',
        method: 'GET',
        route: '/jobs/{id}',
        status: 404,
        attempt: 2,
        ms: expect.any(Number),
      }),
    ]);
    expect(raw()).not.toContain('j_secret-id');
    expect(raw()).not.toContain(SECRET);
  });

  it('redacts the secrets the request carries from the answer text and from the error it means', async () => {
    const encoded = encodeURIComponent(`${SECRET}/+`);
    handler = (_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ title: `bad key ${SECRET}`, detail: `echo ${encoded}` }));
    const { log } = captureLogger();
    const answer = await exchange(
      port(),
      req({ url: `${base}/jobs/x`, log, secrets: [SECRET, `${SECRET}/+`] }),
    );
    expect(answer.text).not.toContain(SECRET);
    expect(answer.text).toContain('[redacted]');
    const err = answer.error();
    expect(err.code).toBe('DOCEX_API_400');
    expect(`${err.message} ${JSON.stringify(err)}`).not.toContain(SECRET);
    expect(err.problem).toEqual({ title: 'bad key [redacted]', detail: 'echo [redacted]' });
  });

  it('releases an answer body its reader left unread, so the next request on the connection is not held', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(64 * 1024, 1));
      // Never ends: only the pipeline letting go of the body frees the one connection.
    };
    const { log } = captureLogger();
    const status = await send(port(), req({ url: `${base}/files/a`, log }), async (answer) => answer.status);
    expect(status).toBe(200);
    handler = (_req, res) => res.writeHead(200).end('second');
    const answer = await exchange(port(), req({ url: `${base}/files/b`, log }));
    expect(answer.text).toBe('second');
  });

  it('makes a missing answer DOCEX_NETWORK, heard as `error` and without a debug line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const events: Parameters<NonNullable<ApiObserver['request']>>[0][] = [];
    const { log, lines } = captureLogger();
    const err = await caught(exchange(port(events), req({ url: `${gone}/jobs/x`, log })));
    expect(err.code).toBe('DOCEX_NETWORK');
    expect(err.message).toBe('GET /jobs/{id}: no answer (ECONNREFUSED)');
    expect(events.map((e) => e.status)).toEqual(['error']);
    expect(lines()).toEqual([]);
  });

  it('lets the caller name a local cause of a missing answer, which wins over DOCEX_NETWORK', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const { log } = captureLogger();
    const local = new DocexError('DOCEX_SOURCE_READ', 'the file could not be read');
    const heard: (number | 'error')[] = [];
    const err = await send(
      port(),
      req({
        url: `${gone}/x`,
        log,
        onNoAnswer: () => {
          throw local;
        },
        onOutcome: (status) => heard.push(status),
      }),
      async () => 'answered',
    ).catch((e: unknown) => e);
    expect(err).toBe(local);
    expect(heard).toEqual(['error']);
  });

  it('makes a connection dropped while the body streams DOCEX_NETWORK, heard as `error`', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-length': '100000' });
      res.write('partial', () => res.socket?.destroy());
    };
    const events: Parameters<NonNullable<ApiObserver['request']>>[0][] = [];
    const { log } = captureLogger();
    const err = await caught(exchange(port(events), req({ url: `${base}/jobs/x`, log })));
    expect(err.code).toBe('DOCEX_NETWORK');
    expect(events.map((e) => e.status)).toEqual(['error']);
  });
});
