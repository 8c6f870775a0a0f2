import type { Workflow } from '../domain/wire.js';
import type { JobRecord } from './records.js';

/** What a payload job's sending event carries beyond the common fields. */
export function payloadEventFields(
  job: JobRecord,
  workflow: Workflow,
): { extraInfo: { name: string; value: unknown }[]; executionDateUtc: string | null; invoiceId?: string } {
  const payload = job.payload;
  const extraInfo = (payload?.extraInfoIdentifiers ?? []).map((e) => ({
    name: e.name,
    value: e.mustBeEncrypted || e.isEncrypted ? '[encrypted]' : e.value,
  }));
  const invoiceRef = payload?.channelIdentifiers.find((c) => c.kind === 'INVOICE_REFERENCE')?.value;
  return {
    extraInfo,
    executionDateUtc: job.sendingEventExecutionDateUtc ?? null,
    ...(workflow.invoiceConfiguration?.enableInvoiceTracking && invoiceRef ? { invoiceId: invoiceRef } : {}),
  };
}
