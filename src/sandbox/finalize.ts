/**
 * What a sending event becomes when it reaches its outcome: its proofs (records whose PDFs are
 * rendered at each download, no file written), the final statuses of the event and its tasks, and
 * one usage record per channel. All of it is synchronous, so no other writer can interleave (see
 * Lifecycle.finalize).
 */
import { registerBlob } from './blobs.js';
import type { SandboxContext } from './context.js';
import { type ProofInput, renderProofPdf } from './proofs.js';
import type { DocumentEntry, FinalOutcome, SendingEventRecord } from './records.js';
import { USAGE_EVENT_KIND } from './routes/usage-query.js';

type GeneratedType = 'DELIVERY_PROOF' | 'SUBMISSION_REPORT';

/** A proof to offer: what its PDF is rendered from, and that PDF's size. */
export interface RenderedDocument {
  type: GeneratedType;
  proof: ProofInput;
  size: number;
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
export function renderOutcomeDocuments(
  event: SendingEventRecord,
  outcome: FinalOutcome,
  endedAt: string,
): RenderedDocument[] {
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
  return types.map((type) => {
    const proof = { ...input, type };
    return { type, proof, size: renderProofPdf(proof).length };
  });
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
  const newDocs: DocumentEntry[] = rendered.map(({ type, proof, size }) => {
    const name = `${type === 'DELIVERY_PROOF' ? 'delivery-proof' : 'submission-report'}-${event.id}.pdf`;
    // No file to write and sync: the PDF is rendered again, the same bytes, at each download.
    const blob = registerBlob(ctx, {
      id: ctx.newId('blob'),
      file: '',
      name,
      contentType: 'application/pdf',
      size,
      proof,
    });
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
