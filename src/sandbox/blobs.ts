import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isoTime } from '../core/clock.js';
import { writeFileAtomicSync } from './atomic-file.js';
import type { SandboxContext } from './context.js';
import { type ProofInput, renderProofPdf } from './proofs.js';
import type { BlobRecord } from './records.js';

/** Files the sandbox keeps (uploads, extracted originals, proofs): bytes in blobDir, a record in the store. */
export function saveBlob(
  ctx: SandboxContext,
  input: { name: string; contentType: string; data: Uint8Array },
): BlobRecord {
  const id = ctx.newId('blob');
  const file = `${id}.bin`;
  writeFileAtomicSync(path.join(ctx.blobDir, file), input.data);
  return registerBlob(ctx, {
    id,
    file,
    name: input.name,
    contentType: input.contentType,
    size: input.data.length,
  });
}

/** Records a file already written (and renamed) into blobDir. */
export function registerBlob(
  ctx: SandboxContext,
  input: {
    id: string;
    file: string;
    offset?: number;
    name: string;
    contentType: string;
    size: number;
    proof?: ProofInput;
  },
): BlobRecord {
  return ctx.store.insert<BlobRecord>('blob', { ...input, createdAt: isoTime(ctx.clock.now()) });
}

export function blobPath(ctx: SandboxContext, blob: BlobRecord): string {
  return path.join(ctx.blobDir, blob.file);
}

export async function streamBlob(ctx: SandboxContext, blob: BlobRecord, res: ServerResponse): Promise<void> {
  res.writeHead(200, {
    'content-type': blob.contentType,
    'content-length': String(blob.size),
    'content-disposition': `attachment; filename="${blob.name.replace(/["\\\r\n]/g, '_')}"`,
  });
  if (blob.proof) {
    res.end(renderProofPdf(blob.proof));
    return;
  }
  if (blob.size === 0) {
    res.end();
    return;
  }
  const start = blob.offset ?? 0;
  await pipeline(createReadStream(blobPath(ctx, blob), { start, end: start + blob.size - 1 }), res);
}

export function contentTypeOf(name: string): string {
  const ext = path.extname(name).toLowerCase();
  if (ext === '.pdf') return 'application/pdf';
  if (ext === '.csv') return 'text/csv';
  if (ext === '.xml') return 'application/xml';
  if (ext === '.zip') return 'application/zip';
  if (ext === '.json') return 'application/json';
  return 'application/octet-stream';
}
