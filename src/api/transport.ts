import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { TlsDiagnostics } from './tls-diagnostics.js';

/** PEM text or the bytes of a PEM file. */
export type Pem = string | Buffer;

export interface MtlsMaterial {
  /** CA that signed the service's server certificate (pinned: system CAs are not trusted). */
  ca: Pem;
  /** Client certificate and its private key for mutual TLS. */
  cert: Pem;
  key: Pem;
}

export interface Timeouts {
  connectMs: number;
  /** From the request (body included) being sent to the answer's headers. */
  headersMs: number;
  /** Longest silence while the answer body streams. */
  bodyMs: number;
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  connectMs: 10_000,
  headersMs: 60_000,
  bodyMs: 60_000,
  keepAliveMs: 30_000,
};

export interface MtlsTransport {
  dispatcher: Dispatcher;
  /** Names the TLS alert behind an "other side closed" (a refused client certificate). */
  diagnostics: TlsDiagnostics;
}

/** The keep-alive pool for the API and token hosts: every connection presents the client cert. */
export function createMtlsAgent(tls: MtlsMaterial, timeouts: Partial<Timeouts> = {}): MtlsTransport {
  const t = { ...DEFAULT_TIMEOUTS, ...timeouts };
  const diagnostics = new TlsDiagnostics({ ca: tls.ca, cert: tls.cert, key: tls.key });
  // Built once: tls.connect would otherwise parse the CA, certificate and key for every connection.
  const secureContext = createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
  const dispatcher = new Agent({
    connect: { secureContext, rejectUnauthorized: true, timeout: t.connectMs },
    headersTimeout: t.headersMs,
    bodyTimeout: t.bodyMs,
    keepAliveTimeout: t.keepAliveMs,
    connections: 16,
  });
  return { dispatcher, diagnostics };
}

/**
 * Pre-signed URLs live on an object-store-like host: no client certificate there, and the host
 * may be public, so the configured CA is trusted in addition to the system CAs.
 */
export function createFilesAgent(ca: Pem | undefined, timeouts: Partial<Timeouts> = {}): Dispatcher {
  const t = { ...DEFAULT_TIMEOUTS, ...timeouts };
  const cas = ca === undefined ? [...rootCertificates] : [...rootCertificates, ca];
  // Built once: parsing ~150 root certificates per connection cost more than the TLS handshake.
  const secureContext = createSecureContext({ ca: cas });
  return new Agent({
    connect: { secureContext, rejectUnauthorized: true, timeout: t.connectMs },
    connectTimeout: t.connectMs,
    headersTimeout: t.headersMs,
    bodyTimeout: t.bodyMs,
    keepAliveTimeout: t.keepAliveMs,
    connections: 8,
  });
}
