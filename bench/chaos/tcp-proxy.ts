/**
 * A small TCP fault proxy on 127.0.0.1 (toxiproxy and netem are not available here): it forwards
 * bytes to a target and, as told, adds latency, limits bandwidth, resets a connection after N bytes
 * sent upstream, stalls (holds every byte until released) or refuses new connections. TLS passes
 * through untouched, so mTLS between the agent and the sandbox still holds end to end.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LinkFaults {
  /** Each chunk is forwarded this long after it arrived (both directions). */
  latencyMs?: number;
  /** Bytes per second per direction and connection. */
  bytesPerSecond?: number;
  /** Bytes after which the connection is reset (TCP RST both ways), counted in `resetOn`. */
  resetAfterBytes?: number;
  /** Which direction `resetAfterBytes` counts: `up` (client → target, an upload; default) or `down` (a download). */
  resetOn?: 'up' | 'down';
  /** Share of new connections that get `resetAfterBytes` (default 1: all). */
  resetShare?: number;
  /** While true, nothing is forwarded; bytes wait and flow again once cleared. */
  stall?: boolean;
  /** While true, new connections are reset at once (a host that is down). */
  refuse?: boolean;
}

export interface ProxyCounters {
  connections: number;
  refused: number;
  resets: number;
  /** Connections that were held by a stall at least once. */
  stalled: number;
  bytesUp: number;
  bytesDown: number;
}

export interface TcpFaultProxy {
  /** `127.0.0.1:<port>` the clients connect to. */
  readonly port: number;
  setTarget(host: string, port: number): void;
  set(faults: LinkFaults): void;
  readonly faults: LinkFaults;
  readonly counters: ProxyCounters;
  /** Resets every open connection now (a link drop); answers how many. */
  resetAll(): number;
  close(): Promise<void>;
}

const SLICE = 16 * 1024;
/**
 * From the last byte before a reset to the reset. A reset right behind a write goes out as a FIN,
 * and a reset that reaches the peer before it read the bytes discards them (Linux): the peer gets
 * this long to read them. 20 ms was lost to a stalled event loop on a loaded machine.
 */
const RESET_GRACE_MS = 100;
const HIGH_WATER = 1024 * 1024;

interface Pending {
  chunk: Buffer;
  due: number;
}

export async function startTcpProxy(
  options: { target?: { host: string; port: number }; random?: () => number } = {},
): Promise<TcpFaultProxy> {
  let target = options.target;
  const random = options.random ?? Math.random;
  let faults: LinkFaults = {};
  let releaseStall: (() => void) | undefined;
  let stallGate: Promise<void> = Promise.resolve();
  const counters: ProxyCounters = {
    connections: 0,
    refused: 0,
    resets: 0,
    stalled: 0,
    bytesUp: 0,
    bytesDown: 0,
  };
  const open = new Set<net.Socket>();

  /** One direction: read into a queue (paused above HIGH_WATER), write out after latency/pacing/stall. */
  function pump(
    from: net.Socket,
    to: net.Socket,
    up: boolean,
    link: { onStall: () => void; cut: () => void; cutting: boolean },
    limit?: number,
  ): void {
    const queue: Pending[] = [];
    let queued = 0;
    let sent = 0;
    let writing = false;
    let ended = false;

    const drain = async () => {
      if (writing) return;
      writing = true;
      try {
        while (queue.length > 0 && !to.destroyed && !link.cutting) {
          if (faults.stall) {
            link.onStall();
            await stallGate;
            continue;
          }
          const head = queue[0]!;
          const wait = head.due - Date.now();
          if (wait > 0) await sleep(wait);
          const piece = head.chunk.subarray(0, SLICE);
          head.chunk = head.chunk.subarray(piece.length);
          if (head.chunk.length === 0) queue.shift();
          queued -= piece.length;
          if (queued < HIGH_WATER && from.isPaused()) from.resume();
          if (limit !== undefined && sent + piece.length >= limit) {
            to.write(piece.subarray(0, Math.max(0, limit - sent)));
            counters.resets++;
            // The bytes leave, and the peer reads them, before the reset (RESET_GRACE_MS).
            link.cutting = true;
            from.pause();
            setTimeout(link.cut, RESET_GRACE_MS);
            return;
          }
          sent += piece.length;
          if (up) counters.bytesUp += piece.length;
          else counters.bytesDown += piece.length;
          if (!to.write(piece)) {
            await new Promise<void>((r) => {
              to.once('drain', r);
              to.once('close', r);
            });
          }
          const bps = faults.bytesPerSecond;
          if (bps) await sleep((piece.length / bps) * 1000);
        }
        if (ended && queue.length === 0 && !to.destroyed) to.end();
      } catch {
        link.cut();
      } finally {
        writing = false;
      }
    };

    from.on('data', (chunk: Buffer) => {
      queue.push({ chunk, due: Date.now() + (faults.latencyMs ?? 0) });
      queued += chunk.length;
      if (queued >= HIGH_WATER) from.pause();
      void drain();
    });
    from.on('end', () => {
      ended = true;
      void drain();
    });
  }

  const server = net.createServer((client) => {
    counters.connections++;
    if (faults.refuse || !target) {
      counters.refused++;
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    client.once('close', () => open.delete(client));
    const limit =
      faults.resetAfterBytes !== undefined && random() < (faults.resetShare ?? 1)
        ? faults.resetAfterBytes
        : undefined;
    let held = false;
    const onStall = () => {
      if (held) return;
      held = true;
      counters.stalled++;
    };
    // The client side first: it is the one whose reset the agent must see.
    const cut = () => {
      if (!client.destroyed) client.resetAndDestroy();
      if (!upstream.destroyed) upstream.resetAndDestroy();
    };
    client.on('error', cut);
    upstream.on('error', cut);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    const down = faults.resetOn === 'down';
    const link = { onStall, cut, cutting: false };
    pump(client, upstream, true, link, down ? undefined : limit);
    pump(upstream, client, false, link, down ? limit : undefined);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    counters,
    get faults() {
      return { ...faults };
    },
    setTarget(host, targetPort) {
      target = { host, port: targetPort };
    },
    set(next) {
      const wasStalled = faults.stall === true;
      faults = { ...next };
      if (faults.stall && !wasStalled) {
        stallGate = new Promise<void>((r) => {
          releaseStall = r;
        });
      } else if (!faults.stall && wasStalled) {
        releaseStall?.();
      }
    },
    resetAll() {
      const n = open.size;
      for (const socket of open) socket.resetAndDestroy();
      counters.resets += n;
      return n;
    },
    async close() {
      releaseStall?.();
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
