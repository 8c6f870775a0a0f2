/**
 * Webhook subscriptions of a company: CRUD, secret reset, and a synchronous test delivery. The
 * secret is answered by create and reset-secret only; every other answer leaves it out.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isoTime } from '../../core/clock.js';
import { requiresSubscriptionName } from '../../domain/names-profile.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/wire.js';
import type { RouteModule, SandboxContext } from '../context.js';
import { problem, type SandboxRequest, sendJson } from '../http.js';
import {
  deliveryBody,
  WEBHOOK_KIND,
  WebhookDispatcher,
  type WebhookSubscriptionRecord,
} from '../webhook-dispatcher.js';
import { callerOf, companyPage, ownRecord, readJsonBody } from './route-helpers.js';

const webhookUrl = z.url({ protocol: /^https?$/ }).max(2048);
const eventTypes = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .refine((types) => new Set(types).size === types.length, 'eventTypes must not repeat a type');

const createBody = z.object({
  url: webhookUrl,
  eventTypes,
  /** The reference's "internal name"; required under the `reference` names profile. */
  name: z.string().trim().min(1).max(200).optional(),
  enabled: z.boolean().optional(),
  description: z.string().max(500).nullable().optional(),
});
const updateBody = createBody.partial();
const testBody = z.object({ eventType: z.enum(WEBHOOK_EVENT_TYPES).optional() });

/** Data of a test delivery per type, shaped as the real events (decisions, Webhooks). */
const TEST_DATA: Record<WebhookEventType, Record<string, unknown>> = {
  'job.status.changed': { jobId: 'job_test', status: 'COMPLETED', previousStatus: 'PROCESSING' },
  'sending.event.status.changed': {
    sendingEventId: 'se_test',
    jobId: 'job_test',
    businessStatus: 'SUCCESS',
    status: 'SUCCESS',
  },
  'sending.event.file.ready': {
    sendingEventId: 'se_test',
    jobId: 'job_test',
    fileReference: 'proof_test',
    type: 'DELIVERY_PROOF',
  },
  'peppol.document.received': { documentId: 'ppl_test', senderId: '0208:0123456789' },
};

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function toWire(record: WebhookSubscriptionRecord): Record<string, unknown> {
  const { secret: _secret, companyId: _companyId, ...wire } = record;
  return wire;
}

function subscription(ctx: SandboxContext, req: SandboxRequest): WebhookSubscriptionRecord {
  return ownRecord<WebhookSubscriptionRecord>(
    ctx.store,
    WEBHOOK_KIND,
    req.params['id'] ?? '',
    req,
    'webhook subscription',
  );
}

/** The routes; `dispatcher` sends the test deliveries (a fresh one on the global undici agent by default). */
export function createWebhookRoutes(dispatcher?: WebhookDispatcher): RouteModule {
  return (router, ctx) => {
    const sender = dispatcher ?? new WebhookDispatcher(ctx);

    router.add('POST', '/webhooks', async (req, res) => {
      const body = await readJsonBody(req, createBody);
      if (body.name === undefined && requiresSubscriptionName(ctx.settings.names)) {
        throw problem(400, 'name is required', [{ field: 'name', message: 'the internal name is required' }]);
      }
      const companyId = callerOf(req).companyId;
      const at = isoTime(ctx.clock.now());
      const record: WebhookSubscriptionRecord = {
        id: ctx.newId('wh'),
        companyId,
        url: body.url,
        eventTypes: body.eventTypes,
        ...(body.name !== undefined ? { name: body.name } : {}),
        enabled: body.enabled ?? true,
        ...(body.description != null ? { description: body.description } : {}),
        secret: newWebhookSecret(),
        createdAt: at,
        lastModifiedAt: at,
      };
      ctx.store.insert(WEBHOOK_KIND, record, { companyId });
      ctx.log.info(
        { subscriptionId: record.id, companyId, eventTypes: record.eventTypes },
        'webhook subscription created',
      );
      sendJson(res, 201, { ...toWire(record), secret: record.secret });
    });

    router.add('GET', '/webhooks', (req, res) => {
      const page = companyPage<WebhookSubscriptionRecord>(ctx.store, WEBHOOK_KIND, req);
      sendJson(res, 200, { items: page.items.map(toWire), totalItems: page.totalItems });
    });

    router.add('GET', '/webhooks/:id', (req, res) => {
      sendJson(res, 200, toWire(subscription(ctx, req)));
    });

    router.add('PATCH', '/webhooks/:id', async (req, res) => {
      const current = subscription(ctx, req);
      const body = await readJsonBody(req, updateBody);
      const updated: WebhookSubscriptionRecord = {
        ...current,
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.eventTypes !== undefined ? { eventTypes: body.eventTypes } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        lastModifiedAt: isoTime(ctx.clock.now()),
      };
      sendJson(res, 200, toWire(ctx.store.put(WEBHOOK_KIND, updated)));
    });

    router.add('DELETE', '/webhooks/:id', (req, res) => {
      const current = subscription(ctx, req);
      ctx.store.delete(WEBHOOK_KIND, current.id);
      ctx.log.info({ subscriptionId: current.id }, 'webhook subscription deleted');
      sendJson(res, 200, { success: true });
    });

    router.add('POST', '/webhooks/:id/reset-secret', (req, res) => {
      const current = subscription(ctx, req);
      const updated = ctx.store.put(WEBHOOK_KIND, {
        ...current,
        secret: newWebhookSecret(),
        lastModifiedAt: isoTime(ctx.clock.now()),
      });
      ctx.log.info({ subscriptionId: current.id }, 'webhook secret reset');
      sendJson(res, 200, { ...toWire(updated), secret: updated.secret });
    });

    router.add('POST', '/webhooks/:id/test', async (req, res) => {
      const current = subscription(ctx, req);
      const body = await readJsonBody(req, testBody);
      let type = body.eventType as WebhookEventType | undefined;
      if (type === undefined) {
        if (current.eventTypes.length > 1) {
          throw problem(400, 'eventType is required when the subscription has more than one event type', [
            { field: 'eventType', message: `one of ${current.eventTypes.join(', ')}` },
          ]);
        }
        type = current.eventTypes[0] as WebhookEventType;
      } else if (!current.eventTypes.includes(type)) {
        throw problem(400, `the subscription does not subscribe to ${type}`, [
          { field: 'eventType', message: `one of ${current.eventTypes.join(', ')}` },
        ]);
      }
      const id = ctx.newId('msg');
      const payload = deliveryBody(
        id,
        type,
        current.companyId,
        { ...TEST_DATA[type], test: true },
        ctx.clock.now(),
      );
      const status = await sender.deliverOnce(current, { id, body: payload });
      ctx.log.info({ subscriptionId: current.id, eventType: type, status }, 'webhook test sent');
      sendJson(res, 200, { status });
    });
  };
}

export const registerWebhookRoutes: RouteModule = createWebhookRoutes();
