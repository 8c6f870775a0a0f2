/**
 * Whether a webhook request is a genuine delivery, pure: the request line, headers, body, secrets
 * and the time in; a refusal (status, reason, what the log shows) or the delivery out. Two stages,
 * cheapest refusal first, because the body is read between them: judgeRequest before a byte of it
 * (wrong path or method, a declared length over the limit, missing headers or a stale timestamp),
 * judgeDelivery after (a body over the limit, no secret yet, a signature that matches none, a body
 * that is not a delivery). webhook-receiver.ts is the HTTP shell around them.
 */
import type { Webhook } from 'standardwebhooks';
import { type WebhookDelivery, webhookDeliverySchema } from '../domain/wire.js';
import { checkHeaders, signatureMatches, type WebhookHeaders } from './webhook-verify.js';

/** What a refused request is answered (`{"error": reason}`) and logged. */
export type RefusalReason =
  | 'not-found'
  | 'method-not-allowed'
  | 'body-too-large'
  | 'missing-headers'
  | 'bad-timestamp'
  | 'stale-timestamp'
  | 'no-secret-configured'
  | 'bad-signature'
  | 'not-a-delivery'
  // The shell's own, when the store cannot make the delivery durable: the sender delivers it again.
  | 'store-unavailable'
  | 'effect-not-recorded';

export interface Refusal {
  refused: true;
  status: number;
  reason: RefusalReason;
  /**
   * A refused delivery (counted, logged as refused). A request that is not meant for the receiver
   * at all (another path, another method) is answered, not counted.
   */
  counted: boolean;
  /** The connection is closed after the answer (the client may still be sending a large body). */
  close: boolean;
  /** What the log shows of the refused request. */
  fields: Record<string, unknown>;
  /** The `allow` header of a 405. */
  allow?: string;
}

export interface DeliveryRequest {
  /** The request's path, without its query. */
  path: string;
  method: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

export interface DeliveryRules {
  path: string;
  maxBodyBytes: number;
  toleranceMs: number;
}

/** A request worth reading the body of: its verified headers. */
export interface Admitted {
  refused: false;
  headers: WebhookHeaders;
  timestampSeconds: number;
}

/** A counted refusal. */
export const refusal = (
  status: number,
  reason: RefusalReason,
  fields: Record<string, unknown> = {},
  close = false,
): Refusal => ({ refused: true, status, reason, counted: true, close, fields });

/** Before the body is read: `nowMs` is the receiver's clock (the sender signs with its real one). */
export function judgeRequest(
  request: DeliveryRequest,
  nowMs: number,
  rules: DeliveryRules,
): Refusal | Admitted {
  if (request.path !== rules.path) {
    return { refused: true, status: 404, reason: 'not-found', counted: false, close: false, fields: {} };
  }
  if (request.method !== 'POST') {
    return {
      refused: true,
      status: 405,
      reason: 'method-not-allowed',
      counted: false,
      close: false,
      fields: {},
      allow: 'POST',
    };
  }
  const declared = Number(request.headers['content-length'] ?? Number.NaN);
  if (declared > rules.maxBodyBytes) return refusal(413, 'body-too-large', { bytes: declared }, true);
  const check = checkHeaders(request.headers, nowMs, rules.toleranceMs);
  if (!check.ok) return refusal(check.status, check.reason, { webhookId: request.headers['webhook-id'] });
  return { refused: false, headers: check.headers, timestampSeconds: check.timestampSeconds };
}

/**
 * After the body is read (`body` undefined: it grew over the limit and was dropped). `signers`:
 * the secrets to try. No secret at all is not the sender's fault: a 503 makes it retry once one
 * is stored.
 */
export function judgeDelivery(
  admitted: Admitted,
  body: Buffer | undefined,
  signers: readonly Webhook[],
): Refusal | { refused: false; webhookId: string; delivery: WebhookDelivery } {
  const webhookId = admitted.headers.id;
  if (!body) return refusal(413, 'body-too-large', { webhookId }, true);
  if (signers.length === 0) return refusal(503, 'no-secret-configured', { webhookId });
  if (!signatureMatches(admitted.headers, admitted.timestampSeconds, body, signers)) {
    return refusal(401, 'bad-signature', { webhookId });
  }
  try {
    return {
      refused: false,
      webhookId,
      delivery: webhookDeliverySchema.parse(JSON.parse(body.toString('utf8'))),
    };
  } catch {
    return refusal(400, 'not-a-delivery', { webhookId });
  }
}
