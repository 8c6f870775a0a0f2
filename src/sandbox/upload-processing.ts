import type { Workflow } from '../domain/wire.js';
import { blobPath, saveBlob } from './blobs.js';
import { analyseUpload, payloadItem, pdfIdentifierRules } from './content/index.js';
import type { SandboxContext } from './context.js';
import { setJobStatus } from './job-status.js';
import type { NewEventInput } from './new-sending-event.js';
import { payloadEventFields } from './payload-event.js';
import type { BlobRecord, JobRecord } from './records.js';
import { WORKFLOW_KIND } from './routes/workflows.js';

/**
 * Turns a job's uploaded file into sending events, or fails the job when it cannot be read. Runs
 * after the upload was answered (a big ZIP must not hold the PUT open) and again at start for a
 * job whose upload was recorded but whose processing never finished.
 */
export async function processUpload(
  ctx: SandboxContext,
  lifecycle: { createEvent(input: NewEventInput): unknown },
  job: JobRecord,
): Promise<void> {
  if (job.status !== 'PROCESSING' || !job.upload || job.sendingEventCount > 0) return;
  const blob = ctx.store.get<BlobRecord>('blob', job.upload.blobId);
  const workflow = ctx.store.get<Workflow & { id: string }>(WORKFLOW_KIND, job.workflowId);
  if (!workflow || !blob) {
    setJobStatus(ctx, job, 'FAILED', {
      errorList: [
        workflow
          ? { code: 'FILE_GONE', message: 'the uploaded file is no longer stored' }
          : { code: 'WORKFLOW_GONE', message: 'the workflow no longer exists' },
      ],
    });
    return;
  }
  const inputSource = workflow.inputSource;
  const result = await analyseUpload({
    filePath: blobPath(ctx, blob),
    filename: job.filename,
    inputSourceType: inputSource.type,
    // A PDF workflow reads its recipients from the text (a payload PDF's come with the request).
    ...(inputSource.type === 'PDF'
      ? { pdf: { rules: pdfIdentifierRules(inputSource), extractor: ctx.pdfText, names: ctx.settings.names } }
      : {}),
  });
  if (!result.ok) {
    ctx.log.info({ jobId: job.id, code: result.code }, 'uploaded file could not be processed');
    setJobStatus(ctx, job, 'FAILED', { errorList: [{ code: result.code, message: result.message }] });
    return;
  }
  let items = result.items;
  if (job.kind === 'payload-pdf' && job.payload) {
    // One event per payload job; the PDF's own metadata still counts towards its outcome.
    const item = payloadItem(job.payload, job.filename);
    items = [{ ...item, outcomeHint: `${item.outcomeHint} ${result.items[0]?.outcomeHint ?? ''}` }];
  }
  const extra = job.kind === 'payload-pdf' ? payloadEventFields(job, workflow) : {};
  const created = ctx.store.transaction(() => {
    const current = ctx.store.get<JobRecord>('job', job.id);
    // Checked again inside the transaction: a recovery run and a late first run must not both write.
    if (current?.status !== 'PROCESSING' || current.sendingEventCount > 0) return false;
    for (const item of items) {
      const original = item.original ? saveBlob(ctx, item.original) : blob;
      lifecycle.createEvent({ job, workflow, item, original, ...extra });
    }
    ctx.store.put('job', { ...current, sendingEventCount: items.length });
    return true;
  });
  if (created) ctx.log.info({ jobId: job.id, sendingEvents: items.length }, 'sending events created');
}
