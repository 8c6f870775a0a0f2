/**
 * What a sending event becomes when it reaches its outcome: the proof PDFs, the final statuses of
 * the event and its tasks, and one usage record per channel. The rendering is async; everything
 * after it is synchronous so no other writer can interleave (see Lifecycle.finalize).
 */
import { saveBlob } from './blobs.js';
import type { SandboxContext } from './context.js';
import { renderProofPdf } from './proofs.js';
import type { DocumentEntry, FinalOutcome, SendingEventRecord } from './records.js';
import { USAGE_EVENT_KIND } from './routes/usage-query.js';

type GeneratedType = 'DELIVERY_PROOF' | 'SUBMISSION_REPORT';

export interface RenderedDocument {
  type: GeneratedType;
  data: Uint8Array;
}

/** The forced outcome, else the one the recipient and file text ask for ("reject", "fail"). */
export function outcomeOf(event: SendingEventRecord): FinalOutcome {
  if (event.forcedOutcome) return event.forcedOutcome;
  const hint = `${event.recipient} ${event.outcomeHint}`.toLowerCase();
  if (hint.includes('reject')) return 'REJECTED';
  if (hint.includes('fail')) return 'FAILURE';
  return 'SUCCESS';
}

/** A delivery proof only for a success; a submission report always. */
export async function renderOutcomeDocuments(
  event: SendingEventRecord,
  outcome: FinalOutcome,
  endedAt: string,
): Promise<RenderedDocument[]> {
  const input = {
    sendingEventId: event.id,
    jobId: event.jobId,
    recipient: event.recipient,
    channels: event.taskDetails.map((t) => t.taskType),
    startedAt: event.startDate,
    endedAt,
    outcome,
  };
  const types: GeneratedType[] =
    outcome === 'SUCCESS' ? ['DELIVERY_PROOF', 'SUBMISSION_REPORT'] : ['SUBMISSION_REPORT'];
  const rendered: RenderedDocument[] = [];
  for (const type of types) rendered.push({ type, data: await renderProofPdf({ ...input, type }) });
  return rendered;
}

/**
 * Stores the rendered documents and writes the outcome into `event` (documents, statuses, task
 * results, errors); returns the new document entries. The caller persists the event.
 */
export function applyOutcome(
  ctx: SandboxContext,
  event: SendingEventRecord,
  outcome: FinalOutcome,
  rendered: RenderedDocument[],
  endedAt: string,
): DocumentEntry[] {
  const newDocs: DocumentEntry[] = rendered.map(({ type, data }) => {
    const name = `${type === 'DELIVERY_PROOF' ? 'delivery-proof' : 'submission-report'}-${event.id}.pdf`;
    const blob = saveBlob(ctx, { name, contentType: 'application/pdf', data });
    return {
      fileReference: blob.id,
      name,
      type,
      contentType: blob.contentType,
      size: blob.size,
      createdAt: endedAt,
    };
  });
  event.documents.push(...newDocs);
  event.status = outcome === 'SUCCESS' ? 'SUCCESS' : 'FAILURE';
  event.endDate = endedAt;
  const error =
    outcome === 'SUCCESS'
      ? undefined
      : outcome === 'FAILURE' && event.outcomeError
        ? event.outcomeError
        : outcome === 'REJECTED'
          ? { code: 'RECIPIENT_REJECTED', message: `the recipient ${event.recipient} rejected the sending` }
          : { code: 'DELIVERY_FAILED', message: `the sending to ${event.recipient} could not be delivered` };
  for (const task of event.taskDetails) {
    task.status = outcome === 'SUCCESS' ? 'SUCCESS' : 'FAILURE';
    task.endedAt = endedAt;
    task.startedAt ??= endedAt;
    if (error) task.errors.push({ ...error, taskType: task.taskType });
  }
  if (error) event.errorList.push(error);
  return newDocs;
}

/** One SENDING usage record per channel of the event (the usage routes and reports read them). */
export function writeUsage(ctx: SandboxContext, event: SendingEventRecord, at: string): void {
  for (const task of event.taskDetails) {
    ctx.store.insert(
      USAGE_EVENT_KIND,
      {
        id: ctx.newId('use'),
        timestamp: at,
        companyId: event.companyId,
        departmentId: event.departmentId,
        jobId: event.jobId,
        sendingEventId: event.id,
        channel: task.taskType,
        unit: 'SENDING',
        quantity: 1,
      },
      { companyId: event.companyId },
    );
  }
}
