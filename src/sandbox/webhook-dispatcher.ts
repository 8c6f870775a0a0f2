/**
 * Delivers webhook events to the subscriptions of a company, signed as Standard Webhooks says,
 * with retries. Every delivery is a 'webhook-delivery' record written before the first attempt
 * and after each one, so a restarted sandbox resumes what was pending.
 */
import PQueue from 'p-queue';
import { Webhook } from 'standardwebhooks';
import { type Dispatcher, request } from 'undici';
import { type Clock, isoTime, systemClock } from '../core/clock.js';
import type { SandboxContext, SandboxEvent } from './context.js';
import type { StoredRecord } from './store.js';

export const WEBHOOK_KIND = 'webhook';
export const WEBHOOK_DELIVERY_KIND = 'webhook-delivery';

/** Delays after attempt 1, 2, …: six attempts over about 43 minutes. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];
export const DELIVERY_TIMEOUT_MS = 15_000;

export interface WebhookSubscriptionRecord extends StoredRecord {
  companyId: string;
  url: string;
  eventTypes: string[];
  /** The internal name (the live reference's field); absent when the creator gave none. */
  name?: string;
  enabled: boolean;
  description?: string | null;
  /** `whsec_` + base64; only create and reset-secret answer it. */
  secret: string;
  createdAt: string;
  lastModifiedAt: string;
}

export type DeliveryState = 'PENDING' | 'DELIVERED' | 'FAILED' | 'CANCELLED';

export interface WebhookDeliveryRecord extends StoredRecord {
  /** Also the message id (webhook-id header and body id), the same on every attempt. */
  id: string;
  subscriptionId: string;
  companyId: string;
  type: string;
  /** The exact JSON text sent, so every attempt signs and sends the same bytes. */
  body: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  lastStatus?: number;
  lastError?: string;
  createdAt: string;
  finishedAt?: string;
}

export interface WebhookDispatcherOptions {
  /** undici dispatcher for the deliveries (tests: a local Agent); default the global one. */
  fetchDispatcher?: Dispatcher;
  /** Delays between attempts; the number of attempts is this length plus one. */
  retryDelaysMs?: number[];
  /** How often due retries are looked for (ms). */
  pollIntervalMs?: number;
  timeoutMs?: number;
  /**
   * Clock of the webhook-timestamp header. Receivers check it against their own clock (±5 min),
   * so it is real time by default, whatever offset the sandbox clock carries (like TLS does).
   */
  signingClock?: Clock;
}

export function deliveryBody(
  id: string,
  type: string,
  companyId: string,
  data: Record<string, unknown>,
  at: number,
): string {
  return JSON.stringify({ id, type, timestamp: isoTime(at), companyId, data });
}

export class WebhookDispatcher {
  private readonly retryDelaysMs: number[];
  private readonly pollIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly signingClock: Clock;
  private readonly queue = new PQueue({ concurrency: 8 });
  /** Pending deliveries by id (the store is the truth; this saves scanning it). */
  private readonly pending = new Map<string, number>();
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** Aborted by stop(): deliveries in flight end at once instead of waiting out their timeout. */
  private stopping = new AbortController();

  constructor(
    private readonly ctx: Omit<SandboxContext, 'emit'>,
    private readonly options: WebhookDispatcherOptions = {},
  ) {
    this.retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.signingClock = options.signingClock ?? systemClock;
  }

  /** Records one delivery per enabled subscription of the company that wants this type. */
  enqueue(event: SandboxEvent): void {
    const now = this.ctx.clock.now();
    const subscriptions = this.ctx.store
      .list<WebhookSubscriptionRecord>(WEBHOOK_KIND, { companyId: event.companyId })
      .filter((s) => s.enabled && s.eventTypes.includes(event.type));
    for (const subscription of subscriptions) {
      const id = this.ctx.newId('msg');
      const delivery: WebhookDeliveryRecord = {
        id,
        subscriptionId: subscription.id,
        companyId: event.companyId,
        type: event.type,
        body: deliveryBody(id, event.type, event.companyId, event.data, now),
        state: 'PENDING',
        attempts: 0,
        nextAttemptAt: now,
        createdAt: isoTime(now),
      };
      this.ctx.store.insert(WEBHOOK_DELIVERY_KIND, delivery, {
        companyId: event.companyId,
        parentId: subscription.id,
      });
      this.pending.set(id, now);
    }
    if (subscriptions.length > 0 && this.running) this.runDue();
  }

  /** One signed POST; answers the subscriber's HTTP status, 0 when none came (refused, timeout). */
  async deliverOnce(
    subscription: Pick<WebhookSubscriptionRecord, 'id' | 'url' | 'secret'>,
    delivery: Pick<WebhookDeliveryRecord, 'id' | 'body'>,
  ): Promise<number> {
    const signedAt = new Date(this.signingClock.now());
    const signature = new Webhook(subscription.secret).sign(delivery.id, signedAt, delivery.body);
    try {
      const res = await request(subscription.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'docex-sandbox-webhooks/1.0',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(signedAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: delivery.body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.stopping.signal]),
        ...(this.options.fetchDispatcher ? { dispatcher: this.options.fetchDispatcher } : {}),
      });
      await res.body.dump().catch(() => undefined);
      return res.statusCode;
    } catch (err) {
      this.ctx.log.info(
        { subscriptionId: subscription.id, deliveryId: delivery.id, err: (err as Error).message },
        'webhook delivery got no answer',
      );
      return 0;
    }
  }

  /** Loads pending deliveries (a restart resumes them) and starts looking for due ones. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = new AbortController();
    for (const d of this.ctx.store.iterate<WebhookDeliveryRecord>(WEBHOOK_DELIVERY_KIND)) {
      if (d.state === 'PENDING') this.pending.set(d.id, d.nextAttemptAt);
    }
    this.timer = setInterval(() => this.runDue(), this.pollIntervalMs);
    this.timer.unref();
    this.runDue();
  }

  /** Runs the attempts that are due now (the sandbox's tick calls it after moving the clock). */
  async tick(): Promise<void> {
    this.runDue();
    await this.queue.onIdle();
  }

  /** Drops queued attempts and aborts those in flight; they stay PENDING for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.queue.clear();
    this.stopping.abort();
    await this.queue.onIdle();
    this.inFlight.clear();
  }

  private runDue(): void {
    const now = this.ctx.clock.now();
    for (const [id, dueAt] of this.pending) {
      if (dueAt > now || this.inFlight.has(id)) continue;
      this.inFlight.add(id);
      void this.queue
        .add(() => this.attempt(id))
        .catch((err: unknown) =>
          this.ctx.log.error({ deliveryId: id, err: (err as Error).message }, 'webhook attempt failed'),
        )
        .finally(() => this.inFlight.delete(id));
    }
  }

  private async attempt(id: string): Promise<void> {
    const delivery = this.ctx.store.get<WebhookDeliveryRecord>(WEBHOOK_DELIVERY_KIND, id);
    if (delivery?.state !== 'PENDING') {
      this.pending.delete(id);
      return;
    }
    const subscription = this.ctx.store.get<WebhookSubscriptionRecord>(WEBHOOK_KIND, delivery.subscriptionId);
    if (!subscription?.enabled) {
      this.finish(delivery, 'CANCELLED');
      return;
    }
    const status = await this.deliverOnce(subscription, delivery);
    // Cut short by stop(): not an attempt; the record stays as it was and a restart sends it again.
    if (this.stopping.signal.aborted) return;
    delivery.attempts += 1;
    delivery.lastStatus = status;
    const log = { deliveryId: id, subscriptionId: subscription.id, attempt: delivery.attempts, status };
    if (status >= 200 && status < 300) {
      this.ctx.log.info(log, 'webhook delivered');
      this.finish(delivery, 'DELIVERED');
      return;
    }
    const delay = this.retryDelaysMs[delivery.attempts - 1];
    if (delay === undefined) {
      this.ctx.log.warn(log, 'webhook delivery failed for good');
      this.finish(delivery, 'FAILED');
      return;
    }
    delivery.nextAttemptAt = this.ctx.clock.now() + delay;
    this.ctx.store.put(WEBHOOK_DELIVERY_KIND, delivery);
    this.pending.set(id, delivery.nextAttemptAt);
    this.ctx.log.info({ ...log, retryInMs: delay }, 'webhook delivery will be retried');
  }

  private finish(delivery: WebhookDeliveryRecord, state: DeliveryState): void {
    delivery.state = state;
    delivery.finishedAt = isoTime(this.ctx.clock.now());
    this.ctx.store.put(WEBHOOK_DELIVERY_KIND, delivery);
    this.pending.delete(delivery.id);
  }
}
