import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { retryPolicy } from '../../src/api/retry.js';
import { createFilesAgent } from '../../src/api/transport.js';
import { type FileTransferDeps, normaliseEtag, uploadFile } from '../../src/api/upload.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { caught, caughtDocex } from './support/caught.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { startTlsServer, type TestServer } from './support/test-server.js';

let pki: TestPki;
let dir: string;
let deps: FileTransferDeps;

interface Received {
  headers: Record<string, string | string[] | undefined>;
  size: number;
  md5: string;
}

beforeAll(() => {
  pki = makeTestPki();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-upload-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(() => {
  deps = {
    dispatcher: createFilesAgent(pki.caCertPem),
    clock: new ManualClock(),
    log: silentLogger(),
    policy: retryPolicy({ baseDelayMs: 1, random: () => 0.5 }),
  };
  return () => deps.dispatcher.close();
});

type Reply = (
  received: Received,
  n: number,
) => { status: number; etag?: string } | 'reset-midway' | 'drop-after-body';

/** A files host that hashes what it receives as it streams in, without keeping it. */
async function filesHost(
  reply: Reply,
  onChunk?: (bytesSoFar: number) => Promise<void>,
): Promise<{ server: TestServer; received: Received[] }> {
  const received: Received[] = [];
  const server = await startTlsServer(
    pki,
    async (req, res) => {
      const hash = createHash('md5');
      let size = 0;
      const n = received.length + 1;
      const first = reply({ headers: req.headers, size: 0, md5: '' }, n);
      for await (const chunk of req) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (onChunk) await onChunk(size);
        if (first === 'reset-midway' && size > 1024 * 1024) {
          received.push({ headers: req.headers, size, md5: '' });
          req.socket.destroy();
          return;
        }
      }
      const got = { headers: req.headers, size, md5: hash.digest('hex') };
      received.push(got);
      const answer = reply(got, n);
      if (answer === 'reset-midway') return;
      if (answer === 'drop-after-body') {
        // The store may have kept the file, but its answer is lost.
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, answer.etag === undefined ? {} : { etag: answer.etag });
      res.end();
    },
    true,
  );
  return { server, received };
}

function makeFile(name: string, bytes: number): { file: string; md5: string } {
  const file = path.join(dir, name);
  const data = randomBytes(bytes);
  writeFileSync(file, data);
  return { file, md5: createHash('md5').update(data).digest('hex') };
}

describe('upload to a pre-signed URL', () => {
  it('streams a 50 MB file with Content-Length from stat, MD5 on the fly and no auth headers', async () => {
    const file = path.join(dir, 'big.bin');
    const expected = createHash('md5');
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(file);
      const block = randomBytes(1024 * 1024);
      for (let i = 0; i < 50; i++) {
        block[0] = i;
        expected.update(block);
        out.write(Buffer.from(block));
      }
      out.end();
      out.on('finish', resolve).on('error', reject);
    });
    const md5 = expected.digest('hex');
    let clientRead = 0;
    let readWhileServerPaused = -1;
    const { server, received } = await filesHost(
      (got) => ({ status: 200, etag: `"${got.md5}"` }),
      async (serverBytes) => {
        // The server stops reading after 2 MB; a streaming client must stop reading the file too.
        if (serverBytes > 2 * 1024 * 1024 && readWhileServerPaused < 0) {
          await new Promise((r) => setTimeout(r, 300));
          readWhileServerPaused = clientRead;
        }
      },
    );
    const result = await uploadFile(deps, `${server.url}/upload/job_1?X-Signature=abc`, file, {
      onProgress: (bytes) => {
        clientRead = bytes;
      },
    });
    await server.close();
    expect(result).toEqual({ md5, size: 50 * 1024 * 1024 });
    expect(received).toHaveLength(1);
    expect(received[0]!.md5).toBe(md5);
    expect(received[0]!.headers['content-length']).toBe(String(50 * 1024 * 1024));
    expect(received[0]!.headers.authorization).toBeUndefined();
    expect(received[0]!.headers['x-api-key']).toBeUndefined();
    // Back-pressure reached the file: only socket and stream buffers (about 6-8 MB on loopback)
    // ran ahead of the server, far from the 50 MB a buffered body would show.
    expect(readWhileServerPaused).toBeGreaterThan(2 * 1024 * 1024);
    expect(readWhileServerPaused).toBeLessThan(20 * 1024 * 1024);
  });

  it('fails with DOCEX_UPLOAD_ETAG_MISMATCH when the ETag is not the MD5 of what was sent', async () => {
    const { file } = makeFile('small.pdf', 2048);
    const { server } = await filesHost(() => ({ status: 200, etag: '"0123456789abcdef0123456789abcdef"' }));
    const err = await caught(uploadFile(deps, `${server.url}/upload/job_2?sig=secret-sig`, file));
    await server.close();
    expect(err.code).toBe('DOCEX_UPLOAD_ETAG_MISMATCH');
    expect(err.route).toBe('{fileUploadUrl}');
    expect(err.message).not.toContain('secret-sig');
  });

  it('accepts an ETag in upper case or without quotes', async () => {
    const { file, md5 } = makeFile('case.pdf', 4096);
    const { server } = await filesHost((got) => ({ status: 200, etag: got.md5.toUpperCase() }));
    const result = await uploadFile(deps, `${server.url}/upload/job_3`, file);
    await server.close();
    expect(result.md5).toBe(md5);
    expect(normaliseEtag('W/"ABC"')).toBe('abc');
  });

  it('maps 403 to DOCEX_UPLOAD_EXPIRED and does not retry it', async () => {
    const { file } = makeFile('late.pdf', 1024);
    const { server, received } = await filesHost(() => ({ status: 403 }));
    const err = await caught(uploadFile(deps, `${server.url}/upload/job_4?sig=x`, file));
    await server.close();
    expect(err.code).toBe('DOCEX_UPLOAD_EXPIRED');
    expect(err.status).toBe(403);
    expect(received).toHaveLength(1);
  });

  it('retries a 503 by sending the whole file again from the start', async () => {
    const { file, md5 } = makeFile('retry.pdf', 300 * 1024);
    const { server, received } = await filesHost((got, n) =>
      n === 1 ? { status: 503 } : { status: 200, etag: `"${got.md5}"` },
    );
    const result = await uploadFile(deps, `${server.url}/upload/job_5`, file);
    await server.close();
    expect(result.md5).toBe(md5);
    expect(received.map((r) => r.md5)).toEqual([md5, md5]);
  });

  it('retries after the connection is reset midway through the body', async () => {
    const { file, md5 } = makeFile('reset.bin', 4 * 1024 * 1024);
    const { server, received } = await filesHost((got, n) =>
      n === 1 ? 'reset-midway' : { status: 200, etag: `"${got.md5}"` },
    );
    const result = await uploadFile(deps, `${server.url}/upload/job_6`, file);
    await server.close();
    expect(result).toEqual({ md5, size: 4 * 1024 * 1024 });
    expect(received).toHaveLength(2);
    expect(received[1]!.md5).toBe(md5);
  });

  it('reports a 409 to a retry after a lost answer as DOCEX_UPLOAD_MAYBE_DONE', async () => {
    const { file } = makeFile('lost.pdf', 64 * 1024);
    const { server, received } = await filesHost((_got, n) =>
      n === 1 ? 'drop-after-body' : { status: 409 },
    );
    const err = await caught(uploadFile(deps, `${server.url}/upload/job_7?sig=x`, file));
    await server.close();
    expect(err.code).toBe('DOCEX_UPLOAD_MAYBE_DONE');
    expect(err.status).toBe(409);
    expect(err.message).toContain('GET /jobs/{id}');
    expect(received).toHaveLength(2);
  });

  it('keeps DOCEX_API_409 for a 409 to the first attempt or after a 429', async () => {
    const { file } = makeFile('twice.pdf', 1024);
    const first = await filesHost(() => ({ status: 409 }));
    const once = await caught(uploadFile(deps, `${first.server.url}/upload/job_8`, file));
    await first.server.close();
    const limited = await filesHost((_got, n) => ({ status: n === 1 ? 429 : 409 }));
    const after429 = await caught(uploadFile(deps, `${limited.server.url}/upload/job_8`, file));
    await limited.server.close();
    expect(once.code).toBe('DOCEX_API_409');
    expect(after429.code).toBe('DOCEX_API_409');
    expect(limited.received).toHaveLength(2);
  });

  it('reports a missing or unreadable source as DOCEX_SOURCE_READ without retrying', async () => {
    const { server, received } = await filesHost((got) => ({ status: 200, etag: `"${got.md5}"` }));
    const missing = await caughtDocex(
      uploadFile(deps, `${server.url}/upload/job_9`, path.join(dir, 'nope.pdf')),
    );
    const folder = path.join(dir, 'a-directory');
    mkdirSync(folder);
    const unreadable = await caughtDocex(uploadFile(deps, `${server.url}/upload/job_9`, folder));
    await server.close();
    expect(missing.code).toBe('DOCEX_SOURCE_READ');
    expect(missing.details).toMatchObject({ errno: 'ENOENT' });
    expect(unreadable.code).toBe('DOCEX_SOURCE_READ');
    expect(unreadable.details).toMatchObject({ errno: 'EISDIR' });
    expect(received.filter((r) => r.size > 0)).toHaveLength(0);
  });

  it('reports a file truncated during the upload as DOCEX_SOURCE_CHANGED, not a network error', async () => {
    const { file } = makeFile('shrinks.bin', 24 * 1024 * 1024);
    let truncated = false;
    let requests = 0;
    const { server } = await filesHost(
      () => {
        requests += 1;
        return { status: 200 };
      },
      async (serverBytes) => {
        if (!truncated && serverBytes > 1024 * 1024) {
          truncated = true;
          truncateSync(file, 512 * 1024);
        }
      },
    );
    const err = await caughtDocex(uploadFile(deps, `${server.url}/upload/job_10`, file));
    await server.close();
    expect(err.code).toBe('DOCEX_SOURCE_CHANGED');
    expect(err.details).toMatchObject({ sizeAtOpen: 24 * 1024 * 1024, sizeNow: 512 * 1024, uploaded: false });
    expect(requests).toBe(1);
  });

  it('sends only the bytes present when opened and reports a file that grew as DOCEX_SOURCE_CHANGED', async () => {
    const { file, md5 } = makeFile('grows.bin', 2 * 1024 * 1024);
    let grown = false;
    const { server, received } = await filesHost(
      (got) => ({ status: 200, etag: `"${got.md5}"` }),
      async () => {
        if (!grown) {
          grown = true;
          appendFileSync(file, randomBytes(1024));
        }
      },
    );
    const err = await caughtDocex(uploadFile(deps, `${server.url}/upload/job_11`, file));
    await server.close();
    expect(received[0]!.md5).toBe(md5);
    expect(err.code).toBe('DOCEX_SOURCE_CHANGED');
    expect(err.details).toMatchObject({ sizeNow: 2 * 1024 * 1024 + 1024, uploaded: true, md5 });
  });

  describe('against the SHA-256 recorded when the file was taken', () => {
    const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

    it('sends a streamed file of several chunks whole when its bytes match the SHA-256', async () => {
      const { file, md5 } = makeFile('proved.bin', 3 * 1024 * 1024 + 17);
      const { server, received } = await filesHost((got) => ({ status: 200, etag: `"${got.md5}"` }));
      const result = await uploadFile(deps, `${server.url}/upload/job_15`, file, {
        expectSha256: sha256(readFileSync(file)),
      });
      await server.close();
      expect(result).toEqual({ md5, size: 3 * 1024 * 1024 + 17 });
      expect(received.map((r) => [r.size, r.md5])).toEqual([[3 * 1024 * 1024 + 17, md5]]);
    });

    it('never sends whole a file rewritten after its hash with the same size and mtime (DOCEX_SOURCE_CHANGED, not retried)', async () => {
      const size = 2 * 1024 * 1024;
      const { file } = makeFile('swapped.bin', size);
      const taken = sha256(readFileSync(file));
      const { atimeMs, mtimeMs } = statSync(file);
      const other = randomBytes(size);
      writeFileSync(file, other);
      utimesSync(file, atimeMs / 1000, mtimeMs / 1000);
      let serverMax = 0;
      let requests = 0;
      const { server, received } = await filesHost(
        () => {
          requests += 1;
          return { status: 200 };
        },
        async (bytes) => {
          serverMax = Math.max(serverMax, bytes);
        },
      );
      const err = await caughtDocex(
        uploadFile(deps, `${server.url}/upload/job_16`, file, { expectSha256: taken }),
      );
      await server.close();
      expect(err.code).toBe('DOCEX_SOURCE_CHANGED');
      expect(err.message).toMatch(/content changed after it was taken/);
      expect(err.details).toMatchObject({ sha256AtClaim: taken, sha256Read: sha256(other), uploaded: false });
      // The body stopped short of its Content-Length: no store holds these bytes.
      expect(received).toEqual([]);
      expect(serverMax).toBeLessThan(size);
      expect(requests).toBe(1);
    });
  });

  describe('from bytes held in memory', () => {
    it('sends the held bytes, not what the file holds now, with their MD5', async () => {
      const { file } = makeFile('held.pdf', 4096);
      const held = randomBytes(4096);
      const heldMd5 = createHash('md5').update(held).digest('hex');
      const { server, received } = await filesHost((got) => ({ status: 200, etag: `"${got.md5}"` }));
      const { mtimeMs } = statSync(file);
      const result = await uploadFile(deps, `${server.url}/upload/job_12`, file, {
        content: { bytes: held, mtimeMs },
      });
      await server.close();
      // Same size and mtime, other bytes: only a sender that did not read the file again sends these.
      expect(result).toEqual({ md5: heldMd5, size: 4096 });
      expect(received.map((r) => r.md5)).toEqual([heldMd5]);
      expect(received[0]!.headers['content-length']).toBe('4096');
    });

    it('sends the same bytes again after a 503', async () => {
      const { file, md5 } = makeFile('held-retry.pdf', 2048);
      const { server, received } = await filesHost((got, n) =>
        n === 1 ? { status: 503 } : { status: 200, etag: `"${got.md5}"` },
      );
      const result = await uploadFile(deps, `${server.url}/upload/job_13`, file, {
        content: { bytes: readFileSync(file), mtimeMs: statSync(file).mtimeMs },
      });
      await server.close();
      expect(result.md5).toBe(md5);
      expect(received.map((r) => r.md5)).toEqual([md5, md5]);
    });

    it('reports a file that changed during the upload as DOCEX_SOURCE_CHANGED with what was sent', async () => {
      const { file, md5 } = makeFile('held-grows.pdf', 2048);
      const content = { bytes: readFileSync(file), mtimeMs: statSync(file).mtimeMs };
      const { server } = await filesHost((got) => {
        // Asked once before the body (size 0) and once after it: the file grows in between.
        if (got.size > 0) appendFileSync(file, 'more');
        return { status: 200, etag: `"${got.md5}"` };
      });
      const err = await caughtDocex(uploadFile(deps, `${server.url}/upload/job_14`, file, { content }));
      await server.close();
      expect(err.code).toBe('DOCEX_SOURCE_CHANGED');
      expect(err.details).toMatchObject({ sizeAtOpen: 2048, sizeNow: 2052, uploaded: true, md5 });
    });
  });
});
