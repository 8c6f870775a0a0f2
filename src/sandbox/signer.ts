import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';
import type { UrlSigner } from './context.js';
import { problem } from './http.js';

/**
 * Object-store style pre-signed URLs for the files host: `path?expires=<epochMs>&signature=<hex>`,
 * the signature an HMAC-SHA256 over `path\nexpires` with a per-sandbox secret. Anyone holding the
 * URL can use it until it expires, as with a real object store.
 */
export function createUrlSigner(secret: Buffer, baseUrl: () => string, clock: Clock): UrlSigner {
  const mac = (path: string, expiresAt: number) =>
    createHmac('sha256', secret).update(`${path}\n${expiresAt}`).digest('hex');
  return {
    sign(path: string, expiresAt: number): string {
      return `${baseUrl()}${path}?expires=${expiresAt}&signature=${mac(path, expiresAt)}`;
    },
    verify(pathWithQuery: string): { path: string; expiresAt: number } {
      const url = new URL(pathWithQuery, 'https://sandbox.invalid');
      const expiresAt = Number(url.searchParams.get('expires'));
      const signature = url.searchParams.get('signature') ?? '';
      const expected = Buffer.from(mac(url.pathname, expiresAt), 'hex');
      const given = Buffer.from(signature, 'hex');
      if (
        !Number.isFinite(expiresAt) ||
        given.length !== expected.length ||
        !timingSafeEqual(given, expected)
      ) {
        throw problem(403, 'the pre-signed URL signature is missing or wrong');
      }
      if (clock.now() > expiresAt) throw problem(403, 'the pre-signed URL has expired');
      return { path: url.pathname, expiresAt };
    },
  };
}
