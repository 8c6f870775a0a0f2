/**
 * The doctor's TLS handshake check: one connection to the API host with the configured CA,
 * certificate and key. With TLS 1.3 a server refuses a client certificate only after the client
 * considers the handshake done, so the check then sends one bare HEAD request: any answer (401,
 * 403, 404) means the certificate was accepted; a hang-up before it means it was refused.
 */
import { connect } from 'node:tls';
import type { MtlsMaterial } from '../api/index.js';
import type { CheckLine } from './check-line.js';

export interface HandshakeOptions {
  /** For the handshake and the answer to the request after it. */
  timeoutMs?: number;
}

const NETWORK = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

function hintFor(code: string): string {
  if (NETWORK.has(code) || code === 'TIMEOUT') {
    return 'check service.apiUrl and that this host may reach it (DNS, firewall, proxy)';
  }
  // A TLS alert from the server (…_ALERT_CERTIFICATE_REQUIRED, …_ALERT_BAD_CERTIFICATE) is about
  // our certificate; the other certificate codes are about the server's.
  if (!code.includes('_ALERT_') && /CERT|VERIFY|SELF_SIGNED|ISSUER|ALTNAME/.test(code)) {
    return "service.tls.caFile must be the CA that signed the service's server certificate for this environment";
  }
  return "the service refused the client certificate: certFile must be the certificate the portal signed for keyFile's key, of this environment (ACC or PRO)";
}

export function checkHandshake(
  apiUrl: string,
  material: MtlsMaterial,
  options: HandshakeOptions = {},
): Promise<CheckLine> {
  const url = new URL(apiUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const isIp = /^[\d.]+$/.test(host) || host.includes(':');
  const what = 'tls handshake';
  return new Promise((resolve) => {
    let protocol: string | null = null;
    let settled = false;
    const finish = (line: CheckLine) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(line);
    };
    const fail = (code: string, message: string) =>
      finish({ ok: false, what, detail: `${host}:${port}: ${code}: ${message}`, hint: hintFor(code) });
    const socket = connect({
      ...material,
      host,
      port,
      ...(isIp ? {} : { servername: host }),
      ALPNProtocols: ['http/1.1'],
      rejectUnauthorized: true,
    });
    const timer = setTimeout(
      () => fail('TIMEOUT', protocol ? 'no answer after the handshake' : 'no handshake'),
      options.timeoutMs ?? 10_000,
    );
    socket.on('secureConnect', () => {
      protocol = socket.getProtocol();
      const path = `${url.pathname.replace(/\/$/, '')}/health`;
      socket.write(`HEAD ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', () =>
      finish({
        ok: true,
        what,
        detail: `${host}:${port} ${protocol}, server certificate trusted, client certificate accepted`,
      }),
    );
    socket.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? 'ERROR', err.message));
    socket.on('close', () => {
      if (protocol) fail('CLOSED', `the server closed the connection right after the ${protocol} handshake`);
      else fail('CLOSED', 'the server closed the connection during the handshake');
    });
  });
}
