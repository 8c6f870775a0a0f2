import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpFaultProxy } from '../../bench/chaos/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

/** An upstream that records what it received and echoes it back. */
let upstream: net.Server;
let received: Buffer[];
/** Upstream connections that closed (the proxy's reset reached the target). */
let upstreamClosed: number;
let proxy: TcpFaultProxy;

beforeEach(async () => {
  received = [];
  upstreamClosed = 0;
  upstream = net.createServer((socket) => {
    socket.on('data', (chunk) => {
      received.push(chunk);
      socket.write(chunk);
    });
    socket.on('error', () => {});
    socket.on('close', () => upstreamClosed++);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  proxy = await startTcpProxy({
    target: { host: '127.0.0.1', port: (upstream.address() as net.AddressInfo).port },
  });
});

afterEach(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends `data`, collects the echo until `length` bytes came back or the socket ends/fails. */
async function roundTrip(
  data: Buffer,
  length = data.length,
): Promise<{ echo: Buffer; error?: string; ms: number }> {
  const started = Date.now();
  const socket = net.connect(proxy.port, '127.0.0.1', () => socket.write(data));
  const chunks: Buffer[] = [];
  let got = 0;
  return new Promise((resolve) => {
    const done = (error?: string) => {
      socket.destroy();
      resolve({ echo: Buffer.concat(chunks), ms: Date.now() - started, ...(error ? { error } : {}) });
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= length) done();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code));
    socket.on('end', () => done('end'));
  });
}

describe('the TCP fault proxy', () => {
  it('forwards bytes both ways unchanged when no fault is set', async () => {
    const data = randomBytes(3 * 1024 * 1024);
    const { echo, error } = await roundTrip(data);
    expect(error).toBeUndefined();
    expect(echo.equals(data)).toBe(true);
    expect(proxy.counters).toMatchObject({ connections: 1, bytesUp: data.length, bytesDown: data.length });
  });

  it('adds its latency in each direction', async () => {
    proxy.set({ latencyMs: 150 });
    const { echo, ms } = await roundTrip(Buffer.from('ping'));
    expect(echo.toString()).toBe('ping');
    expect(ms).toBeGreaterThanOrEqual(290);
  });

  it('caps the bandwidth of a connection', async () => {
    proxy.set({ bytesPerSecond: 256 * 1024 });
    // 128 KiB at 256 KiB/s: about half a second (the echo flows back while the rest goes up; the
    // first 16 KiB slice leaves at once, as a burst).
    const data = randomBytes(128 * 1024);
    const { echo, ms } = await roundTrip(data);
    expect(echo.equals(data)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(400);
  });

  it('resets a connection after N upstream bytes, and the target sees exactly N bytes', async () => {
    proxy.set({ resetAfterBytes: 5000 });
    const { error } = await roundTrip(randomBytes(64 * 1024));
    expect(error).toBe('ECONNRESET');
    // The client sees its reset before the target has read every byte sent before it: wait for
    // the target's side of the link to close, then count.
    await waitFor(() => upstreamClosed === 1);
    expect(Buffer.concat(received).length).toBe(5000);
    expect(proxy.counters.resets).toBe(1);
  });

  it('counts the reset in the direction it is told: after N bytes downstream, the client got exactly N', async () => {
    proxy.set({ resetAfterBytes: 7000, resetOn: 'down' });
    const { echo, error } = await roundTrip(randomBytes(64 * 1024));
    expect(error).toBe('ECONNRESET');
    expect(echo.length).toBe(7000);
  });

  it('resets only the share of new connections it is told to', async () => {
    const picks = [0.1, 0.9];
    const shared = await startTcpProxy({
      target: { host: '127.0.0.1', port: (upstream.address() as net.AddressInfo).port },
      random: () => picks.shift() ?? 0.9,
    });
    shared.set({ resetAfterBytes: 10, resetShare: 0.5 });
    const send = (port: number) =>
      new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.alloc(100)));
        let got = 0;
        socket.on('data', (c: Buffer) => {
          got += c.length;
          if (got >= 100) {
            socket.destroy();
            resolve('echoed');
          }
        });
        socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
    expect(await send(shared.port)).toBe('ECONNRESET');
    expect(await send(shared.port)).toBe('echoed');
    await shared.close();
  });

  it('holds every byte while stalled and lets them through once released', async () => {
    proxy.set({ stall: true });
    const pending = roundTrip(Buffer.from('held'));
    // The bytes reached the proxy and are held there (it counts the stall when it holds them).
    await waitFor(() => proxy.counters.stalled === 1);
    expect(received).toEqual([]);
    expect(proxy.counters.bytesUp).toBe(0);
    proxy.set({});
    const { echo } = await pending;
    expect(echo.toString()).toBe('held');
    expect(proxy.counters.stalled).toBe(1);
  });

  it('resets new connections while refusing (a host that is down), and serves again after', async () => {
    proxy.set({ refuse: true });
    expect((await roundTrip(Buffer.from('x'))).error).toBe('ECONNRESET');
    expect(proxy.counters.refused).toBe(1);
    proxy.set({});
    expect((await roundTrip(Buffer.from('x'))).echo.toString()).toBe('x');
  });

  it('drops every open connection on resetAll', async () => {
    const socket = await connect();
    const closed = new Promise<string | undefined>((resolve) => {
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      socket.on('close', () => resolve(undefined));
    });
    // Connected on the client's side is not yet accepted on the proxy's: wait until it is.
    await waitFor(() => proxy.counters.connections === 1);
    expect(proxy.resetAll()).toBe(1);
    expect(await closed).toBe('ECONNRESET');
  });
});
