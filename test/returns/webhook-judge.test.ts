/**
 * The webhook receiver's refusals, decided by the pure judge (webhook-judge.ts) with no server:
 * each refusal of a request before its body is read, then each of a body, with the status, reason,
 * whether it is counted and whether the connection closes; and the delivery of a genuine request.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  type Admitted,
  type DeliveryRequest,
  judgeDelivery,
  judgeRequest,
} from '../../src/returns/webhook-judge.js';

const NOW = Date.parse('2026-11-21T10:00:00Z');
const RULES = { path: '/docex/webhooks', maxBodyBytes: 1024, toleranceMs: 5 * 60_000 };
// Fixed secrets: the same signatures every run.
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const OTHER = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
const seconds = (ms: number) => String(Math.floor(ms / 1000));

const BODY = JSON.stringify({
  id: 'evt_1',
  type: 'job.status.changed',
  timestamp: '2026-11-21T10:00:00Z',
  data: { jobId: 'job_1' },
});

function signedHeaders(body: string, at = NOW, secret = SECRET, id = 'msg_1') {
  return {
    'webhook-id': id,
    'webhook-timestamp': seconds(at),
    'webhook-signature': new Webhook(secret).sign(id, new Date(at), body),
    'content-length': String(Buffer.byteLength(body)),
  };
}

const request = (over: Partial<DeliveryRequest> = {}): DeliveryRequest => ({
  path: RULES.path,
  method: 'POST',
  headers: signedHeaders(BODY),
  ...over,
});

function admitted(headers = signedHeaders(BODY)): Admitted {
  const verdict = judgeRequest(request({ headers }), NOW, RULES);
  if (verdict.refused) throw new Error(`refused: ${verdict.reason}`);
  return verdict;
}

describe('a webhook request before its body is read', () => {
  const { 'webhook-signature': _s, ...unsigned } = signedHeaders(BODY);
  it.each([
    { case: 'another path', over: { path: '/other' }, status: 404, reason: 'not-found', counted: false },
    { case: 'a GET', over: { method: 'GET' }, status: 405, reason: 'method-not-allowed', counted: false },
    {
      case: 'a declared length over the limit',
      over: { headers: { ...signedHeaders(BODY), 'content-length': '1025' } },
      status: 413,
      reason: 'body-too-large',
      close: true,
      fields: { bytes: 1025 },
    },
    {
      case: 'no signature header',
      over: { headers: unsigned },
      status: 400,
      reason: 'missing-headers',
      fields: { webhookId: 'msg_1' },
    },
    {
      case: 'a timestamp that is not a number',
      over: { headers: { ...signedHeaders(BODY), 'webhook-timestamp': 'soon' } },
      status: 400,
      reason: 'bad-timestamp',
    },
    {
      case: 'a timestamp past the tolerance',
      over: { headers: signedHeaders(BODY, NOW - RULES.toleranceMs - 1000) },
      status: 401,
      reason: 'stale-timestamp',
    },
    {
      case: 'a timestamp further ahead than the tolerance',
      over: { headers: signedHeaders(BODY, NOW + RULES.toleranceMs + 1000) },
      status: 401,
      reason: 'stale-timestamp',
    },
  ])('refuses $case: $status $reason', (t) => {
    const verdict = judgeRequest(request(t.over), NOW, RULES);
    expect(verdict).toMatchObject({
      refused: true,
      status: t.status,
      reason: t.reason,
      counted: t.counted ?? true,
      close: t.close ?? false,
      ...(t.fields ? { fields: t.fields } : {}),
    });
    if (t.status === 405) expect(verdict).toMatchObject({ allow: 'POST' });
  });

  it('admits a POST to the path with the three headers and a fresh timestamp', () => {
    expect(judgeRequest(request(), NOW, RULES)).toMatchObject({
      refused: false,
      headers: { id: 'msg_1', timestamp: seconds(NOW) },
      timestampSeconds: Math.floor(NOW / 1000),
    });
    // No declared length (chunked): the limit is kept while the body is read.
    const { 'content-length': _l, ...chunked } = signedHeaders(BODY);
    expect(judgeRequest(request({ headers: chunked }), NOW, RULES).refused).toBe(false);
  });
});

describe('a webhook body, once read', () => {
  const signer = new Webhook(SECRET);
  const other = new Webhook(OTHER);
  const notJson = 'not json';
  const notDelivery = JSON.stringify({ hello: 'world' });

  it.each([
    {
      case: 'a body that grew over the limit',
      body: undefined,
      signers: [signer],
      status: 413,
      reason: 'body-too-large',
      close: true,
    },
    { case: 'no secret stored yet', body: BODY, signers: [], status: 503, reason: 'no-secret-configured' },
    {
      case: 'a signature by another secret',
      body: BODY,
      signers: [other],
      status: 401,
      reason: 'bad-signature',
    },
    {
      case: 'a body changed after signing',
      body: BODY.replace('job_1', 'job_2'),
      signers: [signer],
      status: 401,
      reason: 'bad-signature',
    },
    {
      case: 'a signed body that is not JSON',
      body: notJson,
      signers: [signer],
      status: 400,
      reason: 'not-a-delivery',
    },
    {
      case: 'signed JSON that is not a delivery',
      body: notDelivery,
      signers: [signer],
      status: 400,
      reason: 'not-a-delivery',
    },
  ])('refuses $case: $status $reason', (t) => {
    // Headers signed over what the sender meant to send (the body changed after signing is not).
    const signedOver = t.body === undefined || t.reason === 'bad-signature' ? BODY : t.body;
    const verdict = judgeDelivery(
      admitted(signedHeaders(signedOver)),
      t.body === undefined ? undefined : Buffer.from(t.body),
      t.signers,
    );
    expect(verdict).toMatchObject({
      refused: true,
      status: t.status,
      reason: t.reason,
      counted: true,
      close: t.close ?? false,
      fields: { webhookId: 'msg_1' },
    });
  });

  it('accepts a delivery signed by any one of the secrets (a rotation on either side)', () => {
    const verdict = judgeDelivery(admitted(), Buffer.from(BODY), [other, signer]);
    expect(verdict).toMatchObject({
      refused: false,
      webhookId: 'msg_1',
      delivery: { id: 'evt_1', type: 'job.status.changed', data: { jobId: 'job_1' } },
    });
  });
});
