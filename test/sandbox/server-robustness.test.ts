import net from 'node:net';
import tls from 'node:tls';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { startTestSandbox, type TestSandbox } from './sandbox-harness.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox();
});
afterAll(async () => {
  await t?.stop();
});

/** Sends a raw request line to the files host and answers the status line of the reply. */
function rawStatusLine(target: string): Promise<string> {
  const { hostname, port } = new URL(t.sandbox.urls.files);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca: t.sandbox.credentials.caCertPem });
    socket.once('secureConnect', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.once('end', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.once('error', reject);
  });
}

describe('malformed requests', () => {
  it('answers 400 to a request target that is not a URL, and keeps serving', async () => {
    expect(await rawStatusLine('//[')).toBe('HTTP/1.1 400 Bad Request');
    expect((await t.control('GET', '/faults')).status).toBe(200);
  });

  it('answers 400 to a path parameter with broken percent-encoding', async () => {
    expect(await rawStatusLine('/download/%E0%A4%A?expires=1&signature=00')).toBe('HTTP/1.1 400 Bad Request');
    expect((await t.control('GET', '/faults')).status).toBe(200);
  });
});

describe('payload execution date', () => {
  const wordJob = (sendingEventExecutionDateUtc: unknown) =>
    t.api('POST', '/jobs/payload-word', {
      body: {
        workflowId: SEED.workflows.payloadWordEmail,
        jobName: 'dated',
        filename: 'w.docx',
        sendingEventExecutionDateUtc,
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'a@example.com' }],
          extraInfoIdentifiers: [],
          templateData: { a: 1 },
        },
      },
    });

  it('refuses a sendingEventExecutionDateUtc that is not an ISO date-time with 400 naming the field', async () => {
    for (const bad of ['tomorrow', '2026-11-21', '2026-13-40T10:00:00Z']) {
      const res = await wordJob(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.errors).toEqual([
        { field: 'sendingEventExecutionDateUtc', message: 'invalid date-time' },
      ]);
    }
    expect((await wordJob('2026-11-22T10:00:00.000Z')).status).toBe(201);
  });
});

describe('shutdown', () => {
  it('stops at once while a request sleeps in an injected latency, and a late advanceClock does not reject', async () => {
    const own = await startTestSandbox();
    await own.control('POST', '/faults', { route: '/_sandbox/faults', latencyMs: 60_000 });
    await own.control('POST', '/faults', { route: '/jobs', latencyMs: 60_000 });
    const token = await own.token();
    const slow = request(`${own.sandbox.urls.api}/jobs`, {
      dispatcher: own.mtls,
      headers: { authorization: `Bearer ${token}`, 'x-api-key': own.sandbox.credentials.apiKey },
    }).then(
      (res) => res.statusCode,
      (err: NodeJS.ErrnoException) => err.code,
    );
    // Asleep in the latency before the stop: its handler runs (the only one), and nothing between
    // its start and the sleep waits. A stop before that would test another case.
    await waitFor(() => own.sandbox.requestsInFlight() === 1);
    const started = Date.now();
    await own.stop();
    expect(Date.now() - started).toBeLessThan(3_000);
    // The sleeping request was cut off with the connection (or answered 503 on its way out).
    expect([503, 'UND_ERR_SOCKET']).toContain(await slow);
    await expect(own.sandbox.advanceClock(1000)).resolves.toBeUndefined();
  });

  it('stops without waiting for a connection still in its TLS handshake', async () => {
    const own = await startTestSandbox();
    const { hostname, port } = new URL(own.sandbox.urls.api);
    // Connected, not one TLS byte sent: the HTTP layer does not know this connection yet, so
    // closing its connections alone would leave it holding the stop until the handshake timeout.
    const socket = net.connect(Number(port), hostname);
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    // Accepted by the server in the same turn of the loop as the connect, at the latest.
    await new Promise((resolve) => setImmediate(resolve));
    await own.stop();
    await closed;
  });
});
