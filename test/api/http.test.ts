import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '../../src/api/http.js';

describe('the undici request the clients use', () => {
  let base = '';
  const seen: { method: string | undefined; url: string | undefined; header?: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, header: req.headers['x-test'] as string, body });
      res.writeHead(201, { 'content-type': 'text/plain' }).end(`got ${body.length}`);
    });
  });
  const dispatcher = new Agent({ connections: 1 });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await dispatcher.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends method, path with query, headers and body on the given dispatcher and answers status and body', async () => {
    const answer = await request(`${base}/jobs/j%201?after=x&limit=2`, {
      dispatcher,
      method: 'PUT',
      headers: { 'x-test': 'yes', 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(answer.statusCode).toBe(201);
    expect(await answer.body.text()).toBe('got 5');
    expect(seen.at(-1)).toEqual({
      method: 'PUT',
      url: '/jobs/j%201?after=x&limit=2',
      header: 'yes',
      body: 'hello',
    });
  });
});
