import { type ConnectionOptions, connect } from 'node:tls';

/** How long a probe waits after its handshake for the server to refuse the certificate. */
const PROBE_WAIT_MS = 1_000;

/** What the probe reports when the server hangs up right after the handshake. */
export const PEER_CLOSED = 'PEER_CLOSED_AFTER_HANDSHAKE';

function tlsCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO' ? code : undefined;
}

/** A dropped connection before any answer byte: what a refused client certificate looks like. */
export function isAmbiguousDrop(err: unknown): boolean {
  const e = err as { code?: unknown; socket?: { bytesRead?: unknown } } | undefined;
  if (e?.code === 'UND_ERR_SOCKET') return e.socket?.bytesRead === 0;
  return e?.code === 'ECONNRESET' || e?.code === 'EPIPE';
}

/**
 * With TLS 1.3 a server refuses a client certificate after the client considers the handshake
 * done, and undici reports only "other side closed". After such a drop, one probe connection with
 * the same material reads the server's TLS alert, so the error can say DOCEX_TLS and name it.
 */
export class TlsDiagnostics {
  constructor(private readonly material: Pick<ConnectionOptions, 'ca' | 'cert' | 'key'>) {}

  /** The TLS alert code behind `err`, or undefined when the probe found none. */
  async explain(err: unknown, url: string): Promise<string | undefined> {
    if (!isAmbiguousDrop(err)) return undefined;
    return this.probe(new URL(url));
  }

  probe(url: URL): Promise<string | undefined> {
    return new Promise((resolve) => {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const isIp = /^[\d.]+$/.test(host) || host.includes(':');
      let settled = false;
      const done = (code: string | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(code);
      };
      const socket = connect({
        ...this.material,
        host,
        port: Number(url.port || 443),
        ...(isIp ? {} : { servername: host }),
        ALPNProtocols: ['http/1.1'],
        rejectUnauthorized: true,
      });
      let timer = setTimeout(() => done(undefined), PROBE_WAIT_MS * 3);
      let handshakeDone = false;
      socket.on('secureConnect', () => {
        handshakeDone = true;
        clearTimeout(timer);
        timer = setTimeout(() => done(undefined), PROBE_WAIT_MS);
      });
      socket.on('data', () => undefined);
      socket.on('error', (e) => done(tlsCode(e)));
      // A server that hangs up on a fresh, silent connection at once has refused our certificate
      // (Node servers do so without an alert); an HTTP server would wait for a request.
      socket.on('end', () => done(handshakeDone ? PEER_CLOSED : undefined));
      socket.on('close', () => done(handshakeDone ? PEER_CLOSED : undefined));
    });
  }
}
