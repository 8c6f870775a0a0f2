import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Workflow } from '../../domain/wire.js';
import { blobPath, contentTypeOf, registerBlob, saveBlob, streamBlob } from '../blobs.js';
import { analyseUpload, payloadItem } from '../content.js';
import type { SandboxContext } from '../context.js';
import type { FaultInjector } from '../faults.js';
import { problem, type Router, type SandboxRequest } from '../http.js';
import { type Lifecycle, setJobStatus } from '../lifecycle.js';
import {
  PEPPOL_DOCUMENT_KIND,
  type PeppolDocumentRecord,
  peppolBlobPath,
  peppolDownloadPath,
} from '../peppol-documents.js';
import type { BlobRecord, JobRecord } from '../records.js';
import { payloadEventFields } from './jobs.js';

/**
 * The files host: pre-signed uploads (PUT /upload/:jobId) and downloads (GET /download/:blobId),
 * like an object store. No auth headers and no client certificate: the signature is the access.
 */
export function registerFileRoutes(
  router: Router,
  ctx: SandboxContext,
  lifecycle: Lifecycle,
  faults: FaultInjector,
): void {
  router.add('PUT', '/upload/:jobId', async (req, res) => {
    const signed = ctx.signer.verify(req.raw.url ?? '');
    const jobId = req.params['jobId'] ?? '';
    if (signed.path !== `/upload/${jobId}`) throw problem(403, 'the pre-signed URL does not match');
    const job = ctx.store.get<JobRecord>('job', jobId);
    if (!job) throw problem(404, `job ${jobId} does not exist`);
    if (job.status !== 'AWAITING_FILE_UPLOAD' || lifecycle.uploading.has(jobId)) {
      throw problem(409, `job ${jobId} is not awaiting a file (status ${job.status})`);
    }
    const declared = Number(req.raw.headers['content-length'] ?? Number.NaN);
    if (declared > ctx.settings.maxUploadBytes) {
      throw problem(413, `the file is over the limit of ${ctx.settings.maxUploadBytes} bytes`);
    }
    lifecycle.uploading.add(jobId);
    try {
      const received = await receive(ctx, req, jobId, faults.shouldResetUpload(req) ? declared : undefined);
      if (!received) return;
      const blob = registerBlob(ctx, {
        id: received.blobId,
        file: received.file,
        name: job.filename,
        contentType: contentTypeOf(job.filename),
        size: received.size,
      });
      ctx.log.info({ jobId, size: received.size, md5: received.md5 }, 'file uploaded');
      const processing = setJobStatus(ctx, job, 'PROCESSING', {
        upload: { size: received.size, md5: received.md5, blobId: blob.id, uploadedAt: blob.createdAt },
      });
      await processUpload(ctx, lifecycle, processing, blob);
      res.writeHead(200, { etag: `"${received.md5}"`, 'content-length': '0' });
      res.end();
    } finally {
      lifecycle.uploading.delete(jobId);
    }
  });

  router.add('GET', '/download/:blobId', async (req, res) => {
    const signed = ctx.signer.verify(req.raw.url ?? '');
    const blobId = req.params['blobId'] ?? '';
    if (signed.path !== `/download/${blobId}`) throw problem(403, 'the pre-signed URL does not match');
    const blob = ctx.store.get<BlobRecord>('blob', blobId);
    if (!blob) throw problem(404, 'the file does not exist');
    await streamBlob(ctx, blob, res);
  });

  router.add('GET', '/download/peppol/:id', async (req, res) => {
    const signed = ctx.signer.verify(req.raw.url ?? '');
    const id = req.params['id'] ?? '';
    if (signed.path !== peppolDownloadPath(id)) throw problem(403, 'the pre-signed URL does not match');
    const doc = ctx.store.get<PeppolDocumentRecord>(PEPPOL_DOCUMENT_KIND, id);
    if (!doc) throw problem(404, 'the document does not exist');
    const file = peppolBlobPath(ctx.blobDir, id);
    const { size } = await stat(file);
    res.writeHead(200, { 'content-type': 'application/xml', 'content-length': String(size) });
    await pipeline(createReadStream(file), res);
  });
}

interface Received {
  blobId: string;
  file: string;
  size: number;
  md5: string;
}

/**
 * Streams the body to a temporary file, hashing as it goes, then fsyncs and renames it into
 * place. With `resetAfter` set (a fault), the connection is destroyed part-way and nothing is kept.
 */
async function receive(
  ctx: SandboxContext,
  req: SandboxRequest,
  jobId: string,
  resetAt: number | undefined,
): Promise<Received | undefined> {
  const blobId = ctx.newId('blob');
  const file = `${blobId}.bin`;
  const tmp = path.join(ctx.blobDir, `${file}.part`);
  const out = createWriteStream(tmp, { mode: 0o600, flush: true });
  const md5 = createHash('md5');
  let size = 0;
  const cutAt = resetAt !== undefined && Number.isFinite(resetAt) ? Math.max(1, Math.floor(resetAt / 2)) : 1;
  try {
    for await (const chunk of req.raw) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > ctx.settings.maxUploadBytes) {
        throw problem(413, `the file is over the limit of ${ctx.settings.maxUploadBytes} bytes`);
      }
      if (resetAt !== undefined && size >= cutAt) {
        ctx.log.warn({ jobId, receivedBytes: size }, 'fault: connection reset mid-upload');
        out.destroy();
        await rm(tmp, { force: true });
        // Cut the connection last: nothing awaits after this, so the job's upload lock is released
        // before the client can even see the reset and retry.
        req.raw.socket.destroy();
        return undefined;
      }
      md5.update(buf);
      if (!out.write(buf)) await new Promise<void>((resolve) => out.once('drain', resolve));
    }
    await new Promise<void>((resolve, reject) => {
      out.once('error', reject);
      out.end(resolve);
    });
  } catch (err) {
    out.destroy();
    await rm(tmp, { force: true });
    throw err;
  }
  await rename(tmp, path.join(ctx.blobDir, file));
  return { blobId, file, size, md5: md5.digest('hex') };
}

/** Turns the uploaded file into sending events, or fails the job when it cannot be read. */
async function processUpload(
  ctx: SandboxContext,
  lifecycle: Lifecycle,
  job: JobRecord,
  blob: BlobRecord,
): Promise<void> {
  const workflow = ctx.store.get<Workflow & { id: string }>('workflow', job.workflowId);
  if (!workflow) {
    setJobStatus(ctx, job, 'FAILED', {
      errorList: [{ code: 'WORKFLOW_GONE', message: 'the workflow no longer exists' }],
    });
    return;
  }
  const result = await analyseUpload({
    filePath: blobPath(ctx, blob),
    filename: job.filename,
    inputSourceType: workflow.inputSource.type,
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
  ctx.store.transaction(() => {
    for (const item of items) {
      const original = item.original ? saveBlob(ctx, item.original) : blob;
      lifecycle.createEvent({ job, workflow, item, original, ...extra });
    }
    const current = ctx.store.get<JobRecord>('job', job.id) ?? job;
    ctx.store.put('job', { ...current, sendingEventCount: items.length });
  });
  ctx.log.info({ jobId: job.id, sendingEvents: items.length }, 'sending events created');
}
