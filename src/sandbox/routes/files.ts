import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { contentTypeOf, registerBlob, streamBlob } from '../blobs.js';
import type { SandboxContext } from '../context.js';
import type { FaultInjector } from '../faults.js';
import { problem, type Router } from '../http.js';
import { setJobStatus } from '../job-status.js';
import type { Lifecycle } from '../lifecycle.js';
import {
  PEPPOL_DOCUMENT_KIND,
  type PeppolDocumentRecord,
  peppolBlobPath,
  peppolDownloadPath,
} from '../peppol-documents.js';
import type { BlobRecord, JobRecord } from '../records.js';
import { type ReceivedUpload, receiveUpload } from '../upload-receiver.js';

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
    // Decisions, Jobs: the upload carries a Content-Length (as an object store requires).
    const lengthHeader = req.raw.headers['content-length'];
    if (lengthHeader === undefined) throw problem(411, 'the upload needs a Content-Length header');
    const declared = Number(lengthHeader);
    if (declared > ctx.settings.maxUploadBytes) {
      throw problem(413, `the file is over the limit of ${ctx.settings.maxUploadBytes} bytes`);
    }
    lifecycle.uploading.add(jobId);
    let received: ReceivedUpload | undefined;
    try {
      received = await receiveUpload({
        blobDir: ctx.blobDir,
        blobId: ctx.newId('blob'),
        body: req.raw,
        maxBytes: ctx.settings.maxUploadBytes,
        log: ctx.log,
        ...(faults.shouldResetUpload(req) ? { resetAt: Math.max(1, Math.floor(declared / 2)) } : {}),
      });
      if (!received) {
        ctx.log.warn({ jobId }, 'fault: connection reset mid-upload');
        // Cut the connection last: the job's upload lock is released before the client can retry.
        req.raw.socket.destroy();
        return;
      }
      const { blobId, file, size, md5 } = received;
      ctx.store.transaction(() => {
        const blob = registerBlob(ctx, {
          id: blobId,
          file,
          name: job.filename,
          contentType: contentTypeOf(job.filename),
          size,
        });
        setJobStatus(ctx, job, 'PROCESSING', {
          upload: { size, md5, blobId: blob.id, uploadedAt: blob.createdAt },
        });
      });
      lifecycle.untrackAwaiting(jobId);
    } finally {
      lifecycle.uploading.delete(jobId);
    }
    ctx.log.info({ jobId, size: received.size, md5: received.md5 }, 'file uploaded');
    // The file is durable and recorded: answer now, turn it into sending events in the background.
    res.writeHead(200, { etag: `"${received.md5}"`, 'content-length': '0' });
    res.end();
    lifecycle.processUploadLater(jobId, faults.processingDelayMs(req));
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
