/**
 * What a verified delivery means for the agent: which callback learns of it. Pure routing, no I/O.
 * Deliveries only make the agent look sooner; the work itself is the polling code's. Each callback
 * makes the delivery's durable effect (awaited before the delivery is answered: a job's poll due
 * now, in the store) and answers what may wait until after the answer (the poll itself).
 */
import type { Logger } from '../core/logger.js';
import type { WebhookDelivery } from '../domain/wire.js';

/** The work a delivery leaves for after its answer: nothing in it is needed for durability. */
export type AfterAnswer = () => void;

/** A callback's durable effect, and the work for after the answer (none: nothing to do). */
export type Effect = Promise<AfterAnswer | undefined> | AfterAnswer | undefined;

export interface InboundCallbacks {
  /** job.status.changed: record that this job is to be polled now. */
  onJobEvent?(jobId: string): Effect;
  /** sending.event.status.changed / sending.event.file.ready: record that its job is to be polled now. */
  onSendingEvent?(sendingEventId: string, jobId?: string): Effect;
  /** peppol.document.received: poll the incoming documents now. */
  onPeppolDocument?(documentId: string | undefined): Effect;
  /** Every verified delivery, test ones included, once answered: webhooks work, polling may slow down. */
  onAnyDelivery?(): void;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The ids a delivery names, for logs and routing. */
export function deliveryFields(delivery: WebhookDelivery) {
  const d = delivery.data;
  return {
    eventType: delivery.type,
    jobId: str(d['jobId']),
    sendingEventId: str(d['sendingEventId']),
    documentId: str(d['documentId']),
    test: d['test'] === true,
  };
}

/** The callback a delivery goes to, called; undefined when none applies. */
function route(
  delivery: WebhookDelivery,
  callbacks: InboundCallbacks,
  log: Logger,
  webhookId: string,
): Effect {
  const f = deliveryFields(delivery);
  // A test delivery names made-up ids (job_test …): following them would only cost 404s.
  if (f.test) {
    log.info({ webhookId, eventType: f.eventType }, 'webhook test delivery received');
    return undefined;
  }
  switch (f.eventType) {
    case 'job.status.changed':
      return f.jobId ? callbacks.onJobEvent?.(f.jobId) : undefined;
    case 'sending.event.status.changed':
    case 'sending.event.file.ready':
      if (f.sendingEventId) return callbacks.onSendingEvent?.(f.sendingEventId, f.jobId);
      return f.jobId ? callbacks.onJobEvent?.(f.jobId) : undefined;
    case 'peppol.document.received':
      return callbacks.onPeppolDocument?.(f.documentId);
    default:
      log.warn({ webhookId, eventType: f.eventType }, 'webhook of an unknown event type; acknowledged');
      return undefined;
  }
}

/**
 * Makes the delivery's durable effect (rejects when it cannot be recorded: the delivery must not
 * be acknowledged) and answers the work for after the answer, onAnyDelivery first.
 */
export async function routeDelivery(
  delivery: WebhookDelivery,
  callbacks: InboundCallbacks,
  log: Logger,
  webhookId: string,
): Promise<AfterAnswer> {
  const after = await route(delivery, callbacks, log, webhookId);
  return () => {
    callbacks.onAnyDelivery?.();
    if (typeof after === 'function') after();
  };
}
