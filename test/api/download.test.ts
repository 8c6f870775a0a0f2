import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { downloadFile } from '../../src/api/download.js';
import { retryPolicy } from '../../src/api/retry.js';
import { createFilesAgent } from '../../src/api/transport.js';
import type { FileTransferDeps } from '../../src/api/upload.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { caught, caughtDocex } from './support/caught.js';
import { captureLogger } from './support/log-capture.js';
import { makeTestPki, type TestPki } from './support/pki.js';
import { startTlsServer } from './support/test-server.js';

let pki: TestPki;
let root: string;
let dir: string;
let deps: FileTransferDeps;
const body = randomBytes(3 * 1024 * 1024 + 17);
const bodyMd5 = createHash('md5').update(body).digest('hex');

beforeAll(() => {
  pki = makeTestPki();
  root = mkdtempSync(path.join(os.tmpdir(), 'docex-download-'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeEach(() => {
  dir = mkdtempSync(path.join(root, 'case-'));
  deps = {
    dispatcher: createFilesAgent(pki.caCertPem),
    clock: new ManualClock(),
    log: silentLogger(),
    policy: retryPolicy({ baseDelayMs: 1, random: () => 0.5, maxAttempts: 3 }),
  };
  return () => deps.dispatcher.close();
});

describe('download of a pre-signed URL', () => {
  it('writes under a .part name beside the target and renames it when complete', async () => {
    let seenWhileStreaming: string[] = [];
    const server = await startTlsServer(pki, async (_req, res) => {
      res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/pdf' });
      res.write(body.subarray(0, 1024 * 1024));
      // Until the client has made its file (a fixed wait can be too short on a loaded machine).
      for (let i = 0; i < 500 && readdirSync(dir).length === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      seenWhileStreaming = readdirSync(dir);
      res.end(body.subarray(1024 * 1024));
    });
    const target = path.join(dir, 'proof.pdf');
    const result = await downloadFile(deps, `${server.url}/files/proof?sig=s3cr3t`, target, {
      expectedSize: body.length,
    });
    await server.close();
    expect(result).toEqual({ size: body.length, md5: bodyMd5 });
    expect(seenWhileStreaming).toHaveLength(1);
    expect(seenWhileStreaming[0]).toMatch(/^proof\.pdf\.part-[0-9a-f]+$/);
    expect(readdirSync(dir)).toEqual(['proof.pdf']);
    expect(readFileSync(target).equals(body)).toBe(true);
  });

  it('leaves no partial file when the server resets mid-body on every attempt', async () => {
    let attempts = 0;
    const server = await startTlsServer(pki, async (req, res) => {
      attempts += 1;
      res.writeHead(200, { 'content-length': body.length });
      res.write(body.subarray(0, 512 * 1024));
      await new Promise((r) => setTimeout(r, 20));
      req.socket.destroy();
    });
    const target = path.join(dir, 'report.pdf');
    const err = await caught(downloadFile(deps, `${server.url}/files/report?sig=s3cr3t`, target));
    await server.close();
    expect(err.code).toBe('DOCEX_NETWORK');
    expect(err.route).toBe('{downloadUrl}');
    expect(err.message).not.toContain('s3cr3t');
    expect(attempts).toBe(3);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('starts over after a reset and keeps only the complete file', async () => {
    let attempts = 0;
    const server = await startTlsServer(pki, async (req, res) => {
      attempts += 1;
      res.writeHead(200, { 'content-length': body.length });
      if (attempts === 1) {
        res.write(body.subarray(0, 256 * 1024));
        await new Promise((r) => setTimeout(r, 20));
        req.socket.destroy();
        return;
      }
      res.end(body);
    });
    const target = path.join(dir, 'retry.pdf');
    const result = await downloadFile(deps, `${server.url}/files/retry`, target);
    await server.close();
    expect(result.md5).toBe(bodyMd5);
    expect(readdirSync(dir)).toEqual(['retry.pdf']);
  });

  it('is heard by the observer and logged like every request: the route template, the bytes, never the URL', async () => {
    const server = await startTlsServer(pki, (req, res) => {
      if (req.url?.includes('gone')) {
        res.writeHead(403).end(`expired: ${req.url}`);
        return;
      }
      res.end(body.subarray(0, 1000));
    });
    const events: unknown[] = [];
    const { log, lines, raw } = captureLogger();
    const heard = { ...deps, log, observer: { request: (e: unknown) => events.push(e) } };
    await downloadFile(heard, `${server.url}/files/a?sig=s3cr3t-signature`, path.join(dir, 'a.pdf'));
    await caught(
      downloadFile(heard, `${server.url}/files/gone?sig=s3cr3t-signature`, path.join(dir, 'b.pdf')),
    );
    await server.close();
    expect(events).toEqual([
      { method: 'GET', route: '{downloadUrl}', status: 200, seconds: expect.any(Number) },
      { method: 'GET', route: '{downloadUrl}', status: 403, seconds: expect.any(Number) },
    ]);
    const requests = lines().filter((l) => l['msg'] === 'api request');
    expect(requests).toMatchObject([
      { method: 'GET', route: '{downloadUrl}', status: 200, size: 1000 },
      { method: 'GET', route: '{downloadUrl}', status: 403 },
    ]);
    expect(raw()).not.toContain('s3cr3t-signature');
  });

  it('rejects a body of another size than expected and leaves no file', async () => {
    const server = await startTlsServer(pki, (_req, res) => {
      res.end(body.subarray(0, 1000));
    });
    const target = path.join(dir, 'short.pdf');
    const err = await caught(downloadFile(deps, `${server.url}/files/short`, target, { expectedSize: 2000 }));
    await server.close();
    expect(err.code).toBe('DOCEX_DOWNLOAD_SIZE_MISMATCH');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('maps an expired URL (403) to DOCEX_API_403 without retrying or writing', async () => {
    let attempts = 0;
    const server = await startTlsServer(pki, (_req, res) => {
      attempts += 1;
      res.writeHead(403, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'Forbidden', status: 403, detail: 'URL expired' }));
    });
    const err = await caught(downloadFile(deps, `${server.url}/files/old`, path.join(dir, 'old.pdf')));
    await server.close();
    expect(err.code).toBe('DOCEX_API_403');
    expect(err.problem?.detail).toBe('URL expired');
    expect(attempts).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('reports a missing target directory as DOCEX_LOCAL_IO and frees the connection at once', async () => {
    let attempts = 0;
    let socketClosed: Promise<boolean> = Promise.resolve(false);
    const chunk = Buffer.alloc(1024 * 1024);
    const server = await startTlsServer(pki, async (req, res) => {
      attempts += 1;
      socketClosed = new Promise((resolve) => {
        req.socket.once('close', () => resolve(true));
        // A client that kept the connection would hold it for good: any bound tells the two apart,
        // and a generous one leaves a loaded machine its stalls.
        setTimeout(() => resolve(false), 10_000).unref();
      });
      // More than socket buffers hold: only a client that drops the body lets this end.
      res.writeHead(200, { 'content-length': 32 * chunk.length });
      for (let i = 0; i < 32 && !res.destroyed; i++) {
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r).once('close', r));
      }
      res.end();
    });
    const gone = path.join(dir, 'removed');
    const err = await caughtDocex(downloadFile(deps, `${server.url}/files/x`, path.join(gone, 'proof.pdf')));
    const closed = await socketClosed;
    await server.close();
    expect(err.code).toBe('DOCEX_LOCAL_IO');
    expect(err.details).toMatchObject({ step: 'open', errno: 'ENOENT' });
    expect(attempts).toBe(1);
    expect(closed).toBe(true);
  });

  it('reports a failing write (ENOSPC) as DOCEX_LOCAL_IO, without retrying, and leaves no file', async () => {
    let attempts = 0;
    const server = await startTlsServer(pki, (_req, res) => {
      attempts += 1;
      res.end(body);
    });
    const full: typeof deps = {
      ...deps,
      openTemp: async (p) => {
        const handle = await open(p, 'wx');
        let written = 0;
        return {
          write: async (buf: Buffer) => {
            written += buf.length;
            if (written > 1024 * 1024) {
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
                code: 'ENOSPC',
                syscall: 'write',
              });
            }
            return handle.write(buf);
          },
          sync: () => handle.sync(),
          close: () => handle.close(),
        };
      },
    };
    const err = await caughtDocex(downloadFile(full, `${server.url}/files/full`, path.join(dir, 'full.pdf')));
    await server.close();
    expect(err.code).toBe('DOCEX_LOCAL_IO');
    expect(err.details).toMatchObject({ step: 'write', errno: 'ENOSPC' });
    expect(attempts).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });
});
