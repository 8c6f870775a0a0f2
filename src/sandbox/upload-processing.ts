import { rm } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Workflow } from '../domain/wire.js';
import { blobPath, registerBlob } from './blobs.js';
import { type ContentItem, payloadItem, pdfIdentifierRules } from './content/index.js';
import { readSpool, type SpooledItem } from './content/spool.js';
import type { SandboxContext } from './context.js';
import { setJobStatus } from './job-status.js';
import type { NewEventInput } from './new-sending-event.js';
import { payloadEventFields } from './payload-event.js';
import type { BlobRecord, JobRecord } from './records.js';
import { WORKFLOW_KIND } from './routes/workflows.js';

/**
 * Sending events written per transaction; between two batches the event loop answers the other
 * clients, so a data file of a million rows never holds the sandbox for more than one batch.
 */
export const EVENT_BATCH = 500;

/** The file name ending of an item spool in the blob folder (the pack beside it is a blob file). */
export const SPOOL_SUFFIX = '.items';

export interface EventMaker {
  createEvent(input: NewEventInput): unknown;
  /** Completes the job once every sending event of it is final (some may be, before the last batch). */
  completeJobIfDone(jobId: string): void;
}

/**
 * Turns a job's uploaded file into sending events, or fails the job when it cannot be read. Runs
 * after the upload was answered (a big ZIP must not hold the PUT open) and again at start for a
 * job whose upload was recorded but whose processing never finished. The file is read in a worker
 * (ctx.uploadReader) into a spool, whose items become sending events `EVENT_BATCH` at a time; the
 * job counts the events written so far (`eventsCreated`), so a run stopped between two batches
 * (`signal`) is resumed after the last one written, and sets `sendingEventCount` with the last.
 */
export async function processUpload(
  ctx: SandboxContext,
  maker: EventMaker,
  job: JobRecord,
  signal: AbortSignal,
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
  const spoolId = ctx.newId('blob');
  const paths = {
    pack: path.join(ctx.blobDir, `${spoolId}.bin`),
    items: path.join(ctx.blobDir, `${spoolId}${SPOOL_SUFFIX}`),
  };
  let packUsed = false;
  try {
    const result = await ctx.uploadReader.spool({
      filePath: blobPath(ctx, blob),
      filename: job.filename,
      inputSourceType: inputSource.type,
      // A PDF workflow reads its recipients from the text (a payload PDF's come with the request).
      ...(inputSource.type === 'PDF'
        ? { pdf: { rules: pdfIdentifierRules(inputSource), names: ctx.settings.names } }
        : {}),
      paths,
    });
    if (signal.aborted) return;
    if (!result.ok) {
      ctx.log.info({ jobId: job.id, code: result.code }, 'uploaded file could not be processed');
      const current = ctx.store.get<JobRecord>('job', job.id);
      if (current?.status !== 'PROCESSING') return;
      setJobStatus(ctx, current, 'FAILED', { errorList: [{ code: result.code, message: result.message }] });
      return;
    }
    const total = job.kind === 'payload-pdf' ? 1 : result.count;
    const write = batchWriter(ctx, maker, job, workflow, blob, path.basename(paths.pack), total);
    let batch: SpooledItem[] = [];
    for await (const item of readSpool(paths.items, job.eventsCreated ?? 0)) {
      batch.push(item);
      if (batch.length < EVENT_BATCH) continue;
      if (!write(batch)) return;
      packUsed = true;
      batch = [];
      await nextTurn();
      if (signal.aborted) {
        ctx.log.info(
          { jobId: job.id },
          'upload processing stopped between batches: it resumes at the next start',
        );
        return;
      }
    }
    // The last batch, possibly empty: it sets the job's count.
    if (!write(batch)) return;
    packUsed ||= batch.length > 0;
    ctx.log.info({ jobId: job.id, sendingEvents: total }, 'sending events created');
    maker.completeJobIfDone(job.id);
  } finally {
    await rm(paths.items, { force: true });
    if (!packUsed) await rm(paths.pack, { force: true });
  }
}

/**
 * Writes one batch of spooled items as sending events in one transaction; false when the job
 * moved on meanwhile (deleted, failed, or written by another run), and nothing was written.
 */
function batchWriter(
  ctx: SandboxContext,
  maker: EventMaker,
  job: JobRecord,
  workflow: Workflow & { id: string },
  upload: BlobRecord,
  packFile: string,
  total: number,
): (batch: SpooledItem[]) => boolean {
  const extra = job.kind === 'payload-pdf' ? payloadEventFields(job, workflow) : {};
  let written = job.eventsCreated ?? 0;
  return (batch) =>
    ctx.store.transaction(() => {
      const current = ctx.store.get<JobRecord>('job', job.id);
      // Checked inside the transaction: a recovery run and a late first run must not both write.
      if (current?.status !== 'PROCESSING' || current.sendingEventCount > 0) return false;
      if ((current.eventsCreated ?? 0) !== written) return false;
      const items = batch.slice(0, total - written);
      for (const spooled of items) {
        const original = spooled.original
          ? registerBlob(ctx, { id: ctx.newId('blob'), file: packFile, ...spooled.original })
          : upload;
        maker.createEvent({ job, workflow, item: contentItem(job, spooled), original, ...extra });
      }
      written += items.length;
      ctx.store.put('job', {
        ...current,
        eventsCreated: written,
        ...(written >= total ? { sendingEventCount: total } : {}),
      });
      return true;
    });
}

function contentItem(job: JobRecord, spooled: SpooledItem): ContentItem {
  const item: ContentItem = {
    sourceRef: spooled.sourceRef,
    recipient: spooled.recipient,
    outcomeHint: spooled.outcomeHint,
    ...(spooled.failure ? { failure: spooled.failure } : {}),
  };
  if (job.kind !== 'payload-pdf' || !job.payload) return item;
  // One event per payload job; the PDF's own metadata still counts towards its outcome.
  const payload = payloadItem(job.payload, job.filename);
  return { ...payload, outcomeHint: `${payload.outcomeHint} ${item.outcomeHint}` };
}
