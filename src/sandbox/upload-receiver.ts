import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../core/logger.js';
import { HttpProblem, problem } from './http.js';

export interface ReceivedUpload {
  blobId: string;
  /** File name inside the blob folder. */
  file: string;
  size: number;
  md5: string;
}

export type UploadStreamFactory = (file: string) => Writable;

export interface ReceiveUploadInput {
  blobDir: string;
  blobId: string;
  body: IncomingMessage;
  maxBytes: number;
  log: Logger;
  /** A fault: stop after this many bytes, keep nothing, and answer undefined. */
  resetAt?: number;
  createWriteStream?: UploadStreamFactory;
}

class UploadReset extends Error {}
class ClientGone extends Error {}

/** Counts (413 above the limit), hashes, and hosts the reset-mid-upload fault. */
function meter(input: ReceiveUploadInput, state: { size: number; md5: ReturnType<typeof createHash> }) {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      state.size += chunk.length;
      if (state.size > input.maxBytes) {
        callback(problem(413, `the file is over the limit of ${input.maxBytes} bytes`));
        return;
      }
      if (input.resetAt !== undefined && state.size >= input.resetAt) {
        callback(new UploadReset());
        return;
      }
      state.md5.update(chunk);
      callback(null, chunk);
    },
  });
}

/**
 * Streams an upload into `<blobId>.bin.part`, fsyncs and renames it into place. A local failure
 * (ENOSPC, EACCES, EMFILE) is a 500 problem and leaves no temporary file; the request itself is
 * not destroyed (only unpiped), so the 500 still reaches the client.
 */
export async function receiveUpload(input: ReceiveUploadInput): Promise<ReceivedUpload | undefined> {
  const file = `${input.blobId}.bin`;
  const tmp = path.join(input.blobDir, `${file}.part`);
  const state = { size: 0, md5: createHash('md5') };
  const counter = meter(input, state);
  const body = input.body;
  const onClose = () => {
    if (!body.readableEnded) counter.destroy(new ClientGone('the client went away mid-upload'));
  };
  let stage: 'write' | 'store' = 'write';
  try {
    const sink = (input.createWriteStream ?? ((f) => createWriteStream(f, { mode: 0o600 })))(tmp);
    const written = pipeline(counter, sink);
    body.once('close', onClose);
    // The client may have gone while the request waited (an injected latency): no close comes again.
    if (body.closed) onClose();
    body.pipe(counter);
    await written;
    stage = 'store';
    const handle = await open(tmp, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path.join(input.blobDir, file));
  } catch (err) {
    body.unpipe(counter);
    await rm(tmp, { force: true }).catch(() => undefined);
    if (err instanceof UploadReset) return undefined;
    if (err instanceof HttpProblem) throw withClose(err);
    if (err instanceof ClientGone) throw problem(400, err.message);
    input.log.error({ err, blobId: input.blobId, stage }, 'upload could not be stored');
    throw withClose(problem(500, 'the upload could not be stored'));
  } finally {
    body.off('close', onClose);
  }
  return { blobId: input.blobId, file, size: state.size, md5: state.md5.digest('hex') };
}

/** The body may be partly unread: close the connection after the answer instead of draining it. */
function withClose(p: HttpProblem): HttpProblem {
  return new HttpProblem(p.status, p.title, p.detail, p.errors, { ...p.headers, connection: 'close' });
}
