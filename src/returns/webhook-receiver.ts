/**
 * The webhook receiver: a plain node:http server meant to sit behind the operator's reverse proxy,
 * the HTTP shell around webhook-judge.ts. Per request, cheapest refusal first: wrong path or method,
 * a declared length over the limit (413 before reading a byte), missing headers or a stale
 * timestamp (before reading the body), a body that grows over the limit while read (413, the rest
 * discarded unbuffered), then the signature on the raw bytes, then the JSON; the judge decides
 * each, the shell reads, answers and logs. A webhook id seen before is acknowledged and ignored. A genuine new
 * delivery is acknowledged only once its effect is durable: the id is read (not handled yet), the
 * effect is recorded (a job's poll due now, in the store), then the id is remembered, then 202.
 * Whatever of this fails answers 503 with the id not remembered, so the sender delivers it again.
 * The rest of its work (the poll itself, downloads) runs after the answer.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { WebhookDelivery } from '../domain/wire.js';
import { type AfterAnswer, deliveryFields } from './webhook-events.js';
import { judgeDelivery, judgeRequest, type Refusal, refusal } from './webhook-judge.js';
import type { SecretRing } from './webhook-secrets.js';

export interface WebhookReceiverOptions {
  host: string;
  port: number;
  path: string;
  maxBodyBytes: number;
  toleranceMs: number;
  secrets: Pick<SecretRing, 'current'> & Partial<Pick<SecretRing, 'reloadAfterMismatch'>>;
  /**
   * Whether this id was handled already (a read: a repeat is answered without making the effect
   * again). Without it, only `remember` tells a repeat, after the effect.
   */
  seen?(webhookId: string): Promise<boolean>;
  /**
   * Records the delivery's durable effect before the answer; answers the work that may wait until
   * after it (run then: a failure there is logged, never answered). A rejection answers 503.
   */
  effect?(delivery: WebhookDelivery, webhookId: string): Promise<AfterAnswer | undefined>;
  /** True the first time an id is seen (durable: a restart still knows it). Called after `effect`. */
  remember(webhookId: string, eventType: string | undefined): boolean | Promise<boolean>;
  /** Runs after the answer to a new delivery, after the effect's own work; a failure is logged. */
  onDelivery?(delivery: WebhookDelivery, webhookId: string): void | Promise<void>;
  log: Logger;
  /** Real time by default: the sender signs with its real clock, whatever a test clock says. */
  clock?: Clock;
}

/** After a refusal, what the client still sends is read and dropped, up to this much. */
const DISCARD_LIMIT_BYTES = 4 * 1024 * 1024;

function answer(res: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

/** Drops the unread rest of a refused request without keeping it; cuts a client that sends too much. */
function discard(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT_BYTES) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

class ClientGone extends Error {
  constructor() {
    super('the client closed the connection before the body ended');
  }
}

/** Reads the body up to `limit` bytes; undefined when it is larger (the rest is discarded). */
function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        chunks.length = 0;
        discard(req);
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    const onEnd = () => {
      ended = true;
      resolve(Buffer.concat(chunks, size));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    // A client that goes away mid-body: 'aborted' (ECONNRESET) or a bare close, and no 'end'.
    req.on('error', () => reject(new ClientGone()));
    req.on('close', () => {
      if (!ended) reject(new ClientGone());
    });
  });
}

export class WebhookReceiver {
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
    private readonly pending: Set<Promise<void>>,
    /** Deliveries since start, for metrics: accepted (repeats included) and refused. */
    readonly counts: { accepted: number; rejected: number },
  ) {}

  static async start(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
    const clock = options.clock ?? systemClock;
    const pending = new Set<Promise<void>>();
    const counts = { accepted: 0, rejected: 0 };
    const log = options.log;

    /** Answers a refusal; a refused delivery is counted and logged (another path or method is not). */
    const refuse = (res: ServerResponse, r: Refusal) => {
      if (r.counted) {
        counts.rejected++;
        log.warn({ ...r.fields, status: r.status, reason: r.reason }, 'webhook refused');
      }
      if (r.allow) res.setHeader('allow', r.allow);
      answer(res, r.status, { error: r.reason }, r.close);
    };

    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      const request = { path: (req.url ?? '/').split('?')[0]!, method: req.method, headers: req.headers };
      const admitted = judgeRequest(request, clock.now(), options);
      if (admitted.refused) {
        discard(req);
        refuse(res, admitted);
        return;
      }
      const body = await readLimited(req, options.maxBodyBytes);
      // The secrets' folder is listed only for a body within the limit.
      let verdict = judgeDelivery(admitted, body, body ? options.secrets.current() : []);
      if (verdict.refused && verdict.reason === 'bad-signature') {
        // Maybe signed with a secret stored a moment ago: read the secrets again (rate-limited).
        const fresh = options.secrets.reloadAfterMismatch?.();
        if (fresh && fresh.length > 0) verdict = judgeDelivery(admitted, body, fresh);
      }
      if (verdict.refused) {
        refuse(res, verdict);
        return;
      }
      const { webhookId, delivery } = verdict;
      const fields = deliveryFields(delivery);
      const logFields = {
        webhookId,
        eventType: fields.eventType,
        ...(fields.jobId ? { jobId: fields.jobId } : {}),
        ...(fields.sendingEventId ? { sendingEventId: fields.sendingEventId } : {}),
        ...(fields.documentId ? { documentId: fields.documentId } : {}),
      };
      const duplicate = () => {
        counts.accepted++;
        log.info(logFields, 'webhook repeated; already handled');
        answer(res, 200, { status: 'duplicate' });
      };
      let handled: boolean;
      try {
        handled = (await options.seen?.(webhookId)) ?? false;
      } catch (err) {
        // The store of ids seen cannot answer (a database outage): the sender retries later.
        refuse(res, refusal(503, 'store-unavailable', { ...logFields, err }));
        return;
      }
      if (handled) {
        duplicate();
        return;
      }
      // The effect first, the id after it: a crash in between leaves the id unknown, and the
      // sender's next try makes the effect again (it is idempotent: a poll due now).
      let after: AfterAnswer | undefined;
      try {
        after = await options.effect?.(delivery, webhookId);
      } catch (err) {
        refuse(res, refusal(503, 'effect-not-recorded', { ...logFields, err }));
        return;
      }
      let fresh: boolean;
      try {
        fresh = await options.remember(webhookId, delivery.type);
      } catch (err) {
        refuse(res, refusal(503, 'store-unavailable', { ...logFields, err }));
        return;
      }
      // Two deliveries of one id at once both made the effect; only one is new.
      if (!fresh) {
        duplicate();
        return;
      }
      counts.accepted++;
      answer(res, 202, { status: 'accepted' });
      log.info(logFields, 'webhook accepted');
      if (!after && !options.onDelivery) return;
      // After the answer: the sender never waits for this work (it retries after 15 s of silence).
      track(
        (async () => {
          await new Promise((r) => setImmediate(r));
          await after?.();
          await options.onDelivery?.(delivery, webhookId);
        })().catch((err: unknown) =>
          log.error({ ...logFields, err }, 'webhook work failed; polling will catch up'),
        ),
      );
    };

    /** Kept until settled: stop() waits for requests being handled and for work after answers. */
    const track = (promise: Promise<void>): void => {
      const settled = promise.finally(() => pending.delete(settled));
      pending.add(settled);
    };

    const server = http.createServer((req, res) => {
      track(
        handle(req, res).catch((err: unknown) => {
          if (err instanceof ClientGone) {
            log.info({ webhookId: req.headers['webhook-id'] }, 'webhook sender went away mid-body');
            return;
          }
          log.error({ err }, 'webhook receiver failed on a request');
          if (!res.headersSent) answer(res, 500, { error: 'internal' }, true);
          else res.destroy();
        }),
      );
    });
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      const failed = (err: NodeJS.ErrnoException) =>
        reject(
          new DocexError(
            'DOCEX_WEBHOOK_LISTEN',
            `the webhook receiver cannot listen on ${options.host}:${options.port} (${err.code ?? err.message})`,
            { cause: err, details: { host: options.host, port: options.port } },
          ),
        );
      server.once('error', failed);
      server.listen(options.port, options.host, () => {
        server.off('error', failed);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}${options.path}`;
    log.info({ listen: `${host}:${address.port}`, path: options.path }, 'webhook receiver listening');
    return new WebhookReceiver(server, url, pending, counts);
  }

  /** Stops listening, closes connections and waits for the requests in hand and the work of accepted deliveries. */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    // A request still in hand may add its work after the answer: wait for that too.
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
