import { z } from 'zod';
import {
  pageSchema,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookSubscription,
  webhookSubscriptionSchema,
} from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import type { Page } from './pagination.js';
import type { UnknownValueReporter } from './unknown-values.js';

export interface WebhookCreate {
  url: string;
  eventTypes: WebhookEventType[];
  /** The internal name the live reference gives a subscription. */
  name?: string;
  enabled?: boolean;
  description?: string;
}

const subscriptionPage = pageSchema(webhookSubscriptionSchema);
const secretAnswer = z.looseObject({ secret: z.string().min(1) });
const testAnswer = z.looseObject({ status: z.number() });

/** Subscriptions; `secret` is only in the answers of create and resetSecret. Never log it. */
export class WebhooksApi {
  constructor(
    private readonly caller: ApiCaller,
    private readonly unknown: UnknownValueReporter,
  ) {}

  async create(body: WebhookCreate, options?: CallOptions): Promise<WebhookSubscription> {
    return this.checked(
      await this.caller.call(
        { method: 'POST', route: '/webhooks', body, options },
        webhookSubscriptionSchema,
      ),
    );
  }

  async list(
    query: { after?: string; maxItems?: number } = {},
    options?: CallOptions,
  ): Promise<Page<WebhookSubscription>> {
    const page = await this.caller.call(
      { method: 'GET', route: '/webhooks', query: { after: query.after, maxItems: query.maxItems }, options },
      subscriptionPage,
    );
    return { items: page.items.map((s) => this.checked(s)), totalItems: page.totalItems };
  }

  async get(id: string, options?: CallOptions): Promise<WebhookSubscription> {
    return this.checked(
      await this.caller.call(
        { method: 'GET', route: '/webhooks/{id}', params: { id }, options },
        webhookSubscriptionSchema,
      ),
    );
  }

  async update(
    id: string,
    patch: Partial<WebhookCreate>,
    options?: CallOptions,
  ): Promise<WebhookSubscription> {
    return this.checked(
      await this.caller.call(
        { method: 'PATCH', route: '/webhooks/{id}', params: { id }, body: patch, options },
        webhookSubscriptionSchema,
      ),
    );
  }

  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.caller.json({ method: 'DELETE', route: '/webhooks/{id}', params: { id }, options });
  }

  /** The new secret, returned once by the service. */
  async resetSecret(id: string, options?: CallOptions): Promise<{ secret: string }> {
    const answer = await this.caller.call(
      { method: 'POST', route: '/webhooks/{id}/reset-secret', params: { id }, options },
      secretAnswer,
    );
    return { secret: answer.secret };
  }

  /** Sends a test event; answers the HTTP status the subscriber gave (0 when none). */
  async test(id: string, eventType?: WebhookEventType, options?: CallOptions): Promise<{ status: number }> {
    const answer = await this.caller.call(
      {
        method: 'POST',
        route: '/webhooks/{id}/test',
        params: { id },
        body: eventType === undefined ? {} : { eventType },
        options,
      },
      testAnswer,
    );
    return { status: answer.status };
  }

  private checked(subscription: WebhookSubscription): WebhookSubscription {
    for (const type of subscription.eventTypes)
      this.unknown.check('webhook.eventTypes', type, WEBHOOK_EVENT_TYPES);
    return subscription;
  }
}
