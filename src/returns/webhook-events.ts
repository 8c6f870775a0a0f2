/**
 * What a verified delivery means for the agent: which callback learns of it. Pure routing, no I/O.
 * Deliveries only make the agent look sooner; the work itself is the polling code's.
 */
import type { Logger } from '../core/logger.js';
import type { WebhookDelivery } from '../domain/wire.js';

export interface InboundCallbacks {
  /** job.status.changed: look at this job now. */
  onJobEvent?(jobId: string): void;
  /** sending.event.status.changed / sending.event.file.ready: look at this event now. */
  onSendingEvent?(sendingEventId: string, jobId?: string): void;
  /** peppol.document.received: poll the incoming documents now. */
  onPeppolDocument?(documentId: string | undefined): void;
  /** Every verified delivery, test ones included: webhooks work, polling may slow down. */
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

export function routeDelivery(
  delivery: WebhookDelivery,
  callbacks: InboundCallbacks,
  log: Logger,
  webhookId: string,
): void {
  const f = deliveryFields(delivery);
  callbacks.onAnyDelivery?.();
  // A test delivery names made-up ids (job_test …): following them would only cost 404s.
  if (f.test) {
    log.info({ webhookId, eventType: f.eventType }, 'webhook test delivery received');
    return;
  }
  switch (f.eventType) {
    case 'job.status.changed':
      if (f.jobId) callbacks.onJobEvent?.(f.jobId);
      return;
    case 'sending.event.status.changed':
    case 'sending.event.file.ready':
      if (f.sendingEventId) callbacks.onSendingEvent?.(f.sendingEventId, f.jobId);
      else if (f.jobId) callbacks.onJobEvent?.(f.jobId);
      return;
    case 'peppol.document.received':
      callbacks.onPeppolDocument?.(f.documentId);
      return;
    default:
      log.warn({ webhookId, eventType: f.eventType }, 'webhook of an unknown event type; acknowledged');
  }
}
