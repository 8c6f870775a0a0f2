/**
 * Standard Webhooks verification (decisions, Webhooks): `webhook-signature` holds one or more
 * space-separated `v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>`; a delivery is genuine when
 * one of them matches one of our secrets (so a secret can rotate on either side). The expected
 * value comes from the standardwebhooks package's own `sign`; the comparison is constant-time.
 * The timestamp is checked against an injected clock and tolerance (the package only knows
 * Date.now() and a fixed 5 minutes), and before the body is read: a stale replay costs nothing.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Webhook } from 'standardwebhooks';
import { lazyRequire } from '../core/lazy-require.js';

const standardWebhooks = lazyRequire<typeof import('standardwebhooks')>('standardwebhooks');

export interface WebhookHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

export type HeaderCheck =
  | { ok: true; headers: WebhookHeaders; timestampSeconds: number }
  | { ok: false; status: 400 | 401; reason: 'missing-headers' | 'bad-timestamp' | 'stale-timestamp' };

type RawHeaders = Record<string, string | string[] | undefined>;

function one(headers: RawHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Headers present, timestamp a number within `toleranceMs` of `nowMs` (either side). */
export function checkHeaders(raw: RawHeaders, nowMs: number, toleranceMs: number): HeaderCheck {
  const id = one(raw, 'webhook-id');
  const timestamp = one(raw, 'webhook-timestamp');
  const signature = one(raw, 'webhook-signature');
  if (!id || !timestamp || !signature || id.length > 256) {
    return { ok: false, status: 400, reason: 'missing-headers' };
  }
  if (!/^\d{1,12}$/.test(timestamp.trim())) return { ok: false, status: 400, reason: 'bad-timestamp' };
  const seconds = Number(timestamp.trim());
  if (Math.abs(nowMs - seconds * 1000) > toleranceMs) {
    return { ok: false, status: 401, reason: 'stale-timestamp' };
  }
  return { ok: true, headers: { id, timestamp: timestamp.trim(), signature }, timestampSeconds: seconds };
}

/** A usable signer per secret; a malformed secret (not base64 after `whsec_`) gives undefined. */
export function signerFor(secret: string): Webhook | undefined {
  try {
    return new (standardWebhooks().Webhook)(secret);
  } catch {
    return undefined;
  }
}

/** True when one `v1,` signature of the header matches the body under one of the signers. */
export function signatureMatches(
  headers: WebhookHeaders,
  timestampSeconds: number,
  rawBody: Buffer,
  signers: readonly Webhook[],
): boolean {
  const passed = headers.signature
    .split(' ')
    .map((s) => s.split(','))
    .filter(([version, value]) => version === 'v1' && value)
    .map(([, value]) => Buffer.from(value!, 'utf8'));
  if (passed.length === 0) return false;
  const at = new Date(timestampSeconds * 1000);
  let matched = false;
  for (const signer of signers) {
    const expected = Buffer.from(signer.sign(headers.id, at, rawBody).slice(3), 'utf8');
    for (const candidate of passed) {
      // No early exit: every pair is compared, so timing does not tell which secret matched.
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  return matched;
}
