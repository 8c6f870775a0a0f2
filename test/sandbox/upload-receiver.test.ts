/**
 * The sandbox's upload receiver on its own: a client that went away before its request was read
 * (it waited behind an injected latency) is answered 400 at once, and leaves no temporary file,
 * instead of holding the job's upload lock for ever (every later upload of the job 409).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { HttpProblem } from '../../src/sandbox/http.js';
import { receiveUpload } from '../../src/sandbox/upload-receiver.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('refuses with 400 the body of a client that went away before it was read, and keeps nothing', async () => {
  const blobDir = mkdtempSync(path.join(os.tmpdir(), 'docex-receiver-'));
  dirs.push(blobDir);
  const body = new PassThrough();
  body.write(Buffer.from('%PDF-1.7 part of a file'));
  const closed = new Promise((resolve) => body.once('close', resolve));
  body.destroy();
  await closed;
  const outcome = await Promise.race([
    receiveUpload({
      blobDir,
      blobId: 'blob_gone',
      body: body as unknown as IncomingMessage,
      maxBytes: 1024,
      log: silentLogger(),
    }).then(
      () => 'stored',
      (err: unknown) => err,
    ),
    // A receiver that waits for a close already past never answers: a generous bound says so.
    new Promise((resolve) => setTimeout(() => resolve('no answer within 15 s'), 15_000).unref()),
  ]);
  expect(outcome).toBeInstanceOf(HttpProblem);
  expect(outcome).toMatchObject({ status: 400 });
  expect(readdirSync(blobDir)).toEqual([]);
});
