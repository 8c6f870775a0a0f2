/**
 * Reads the mutual-TLS files the configuration names. The private key gets the same permission
 * rule as any secret file; the CA and certificate are public.
 */
import { readFileSync } from 'node:fs';
import type { MtlsMaterial } from '../api/index.js';
import { DocexError } from '../core/errors.js';
import { readSecretFile } from './load.js';
import type { ServiceConfig } from './schema.js';

export function readPublicFile(file: string, at: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new DocexError('DOCEX_CONFIG_FILE', `${at}: cannot read ${file} (${reason})`, {
      cause: err,
      details: { at, file },
    });
  }
}

/** CA, certificate and key as PEM text for DocexClient. Throws DocexError DOCEX_CONFIG_*. */
export function readTlsMaterial(tls: ServiceConfig['tls']): MtlsMaterial {
  return {
    ca: readPublicFile(tls.caFile, 'service.tls.caFile'),
    cert: readPublicFile(tls.certFile, 'service.tls.certFile'),
    key: readSecretFile(tls.keyFile, 'service.tls.keyFile'),
  };
}
