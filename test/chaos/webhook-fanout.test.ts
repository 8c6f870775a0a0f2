import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { bestAnswer, startWebhookFanout, type WebhookFanout } from '../../bench/chaos/webhook-fanout.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A receiver answering `status` with `{status: said}`, recording what it got. */
async function receiver(status: number, said: string) {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: said }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/docex/webhooks`;
  return { url, got, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function fanout(slots: number): Promise<WebhookFanout> {
  const f = await startWebhookFanout(slots);
  closers.push(() => f.close());
  return f;
}

const headers = {
  'content-type': 'application/json',
  'webhook-id': 'msg_1',
  'webhook-timestamp': '1764280000',
  'webhook-signature': 'v1,c2lnbmF0dXJl',
};
const post = (url: string, body: string) =>
  request(url, { method: 'POST', headers, body }).then(async (res) => ({
    status: res.statusCode,
    body: await res.body.text(),
  }));

describe('the webhook fan-out of the chaos runs', () => {
  it('delivers the exact bytes and signed headers to every agent at once and answers the sender with the acceptance', async () => {
    const a = await receiver(202, 'accepted');
    const b = await receiver(200, 'duplicate');
    closers.push(a.close, b.close);
    const f = await fanout(2);
    f.setBackend(0, a.url);
    f.setBackend(1, b.url);
    const body = '{"id":"msg_1","type":"job.status.changed","data":{"jobId":"job_1"}}';
    expect((await post(f.url, body)).status).toBe(202);
    for (const r of [a, b]) {
      expect(r.got).toHaveLength(1);
      expect(r.got[0]!.body.toString('utf8')).toBe(body);
      expect(r.got[0]!.headers).toMatchObject(headers);
    }
    expect(f.answers().get('msg_1')).toEqual([
      { slot: 0, status: 202, said: 'accepted' },
      { slot: 1, status: 200, said: 'duplicate' },
    ]);
    expect(f.stats()).toMatchObject({
      requests: 1,
      deliveries: 1,
      reachedAll: 1,
      acknowledged: 1,
      refused: 0,
    });
  });

  it('answers with the live agent while the other slot is empty or refuses, and 502 when none answers', async () => {
    const a = await receiver(202, 'accepted');
    closers.push(a.close);
    const f = await fanout(2);
    f.setBackend(0, a.url);
    expect((await post(f.url, '{}')).status).toBe(202);
    f.setBackend(0, undefined);
    expect((await post(f.url, '{}')).status).toBe(502);
    expect(f.stats()).toMatchObject({
      requests: 2,
      deliveries: 1,
      reachedAll: 0,
      acknowledged: 1,
      refused: 1,
    });
  });

  it('picks a 2xx over any error, the acceptance over a repeat, and an error over no answer', () => {
    expect(bestAnswer([503, 200])).toBe(200);
    expect(bestAnswer([200, 202])).toBe(202);
    expect(bestAnswer([0, 503])).toBe(503);
    expect(bestAnswer([0, 0])).toBe(502);
  });
});
