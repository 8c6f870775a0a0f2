/**
 * Issue 29: one hostile or huge upload never holds the sandbox. A 20 MB junk PDF is read in a
 * worker until its time limit and refused as an unreadable upload; a 1,000,000-row data file is
 * read in a worker and its sending events written in batches; meanwhile the sandbox answers
 * requests and turns other uploads into their sending events. Every "meanwhile" is proved by what
 * an answer shows (the junk job still being read, the big job half written), never by a clock.
 */
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { UploadReaderLimits } from '../../src/sandbox/content/upload-reader.js';
import type { JobRecord, SendingEventRecord } from '../../src/sandbox/records.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { EVENT_BATCH } from '../../src/sandbox/upload-processing.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const ROWS = 1_000_000;
const JUNK_BYTES = 20 * 1024 * 1024;
/** Reading a million rows in a worker, twice (before and after a restart), on two busy cores. */
const SLOW = 90_000;
const samplePdf = readFileSync(new URL('../../samples/pdf-email/invoice-2026-0001.pdf', import.meta.url));

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s1-isolation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** "%PDF-1.7" then seeded pseudo-random bytes (xorshift32): the same junk at every run. */
function junkPdf(): Buffer {
  const data = Buffer.alloc(JUNK_BYTES);
  data.write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1');
  let x = 0x2901;
  for (let at = 16; at + 4 <= data.length; at += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data.writeInt32LE(x | 0, at);
  }
  return data;
}

/** The data file, written as a stream: `email;name;amount` then a million rows. */
async function bigCsv(): Promise<string> {
  const file = path.join(dir, 'million.csv');
  const out = createWriteStream(file);
  out.write('email;name;amount\n');
  for (let i = 1; i <= ROWS; i++) {
    if (!out.write(`user${i}@example.com;"Name, ${i}";${i % 997}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return file;
}

/** A sandbox over a state folder of its own, and the calls the tests make on it. */
function sandboxUnder(name: string, uploadReader: Partial<UploadReaderLimits>) {
  const stateDir = path.join(dir, name);
  // One clock across restarts, moved by nobody: no event falls due, only uploads are at work.
  const clock = new ManualClock(Date.now());
  const s = {
    t: undefined as unknown as TestSandbox,
    async start() {
      s.t = await startTestSandbox({ stateDir, clock, uploadReader });
    },
    async newJob(workflowId: string, filename: string): Promise<{ id: string; fileUploadUrl: string }> {
      const res = await s.t.api('POST', '/jobs/single-file', { body: { workflowId, filename } });
      expect(res.status).toBe(201);
      return res.body;
    },
    async uploadFile(url: string, file: string): Promise<number> {
      const res = await request(url, {
        method: 'PUT',
        dispatcher: s.t.plain,
        headers: { 'content-length': String(statSync(file).size) },
        body: createReadStream(file),
      });
      await res.body.dump();
      return res.statusCode;
    },
    job: async (id: string) => (await s.t.api('GET', `/jobs/${id}`)).body,
    eventCount: async (jobId: string): Promise<number> =>
      (await s.t.api('GET', `/sending-events?jobId=${jobId}&maxItems=1`)).body.totalItems,
    /** The job once its upload has become sending events (all of them), or was refused. */
    processed: (id: string) =>
      until(async () => {
        const j = await s.job(id);
        return j.sendingEventCount > 0 || j.status === 'FAILED' ? j : undefined;
      }, SLOW),
  };
  return s;
}

describe('a 20 MB junk PDF', () => {
  // Far beyond what reading a small PDF takes; far below what pdf-lib spends on this junk.
  const s = sandboxUnder('junk', { timeLimitMs: 10_000 });
  beforeAll(() => s.start());
  afterAll(() => s.t?.stop({ keepState: true }));

  it(
    'is refused at the reading time limit as an unreadable upload, while the sandbox answers and turns a small PDF into its sending event',
    async () => {
      const junk = await s.newJob(SEED.workflows.pdfEmail, 'junk.pdf');
      expect((await s.t.files('PUT', junk.fileUploadUrl, { body: junkPdf() })).status).toBe(200);

      const small = await s.newJob(SEED.workflows.pdfEmail, 'small.pdf');
      expect((await s.t.files('PUT', small.fileUploadUrl, { body: samplePdf })).status).toBe(200);
      expect(await s.processed(small.id)).toMatchObject({ status: 'PROCESSING', sendingEventCount: 1 });
      // Still being read: every answer above came while a worker was busy with it.
      expect(await s.job(junk.id)).toMatchObject({ status: 'PROCESSING', sendingEventCount: 0 });

      const refused = await s.processed(junk.id);
      expect(refused).toMatchObject({ status: 'FAILED', sendingEventCount: 0 });
      expect(refused.errorList).toEqual([
        {
          code: 'UNREADABLE_FILE',
          message: 'junk.pdf could not be read in 10 s; it is too complex to process',
        },
      ]);
      expect(await s.eventCount(junk.id)).toBe(0);
    },
    SLOW,
  );
});

describe('a 1,000,000-row data file', () => {
  const s = sandboxUnder('million', {});
  let bigId = '';
  beforeAll(() => s.start());
  afterAll(() => s.t?.stop({ keepState: true }));

  it(
    'has its sending events written in batches, while the sandbox answers and turns a small PDF into its sending event',
    async () => {
      const csv = await bigCsv();
      const big = await s.newJob(SEED.workflows.dataFile, 'million.csv');
      expect(await s.uploadFile(big.fileUploadUrl, csv)).toBe(200);
      bigId = big.id;

      // An answer that sees the job half written: it came between two batches.
      const partial = await until(async () => {
        const n = await s.eventCount(bigId);
        return n > 0 ? n : undefined;
      }, SLOW);
      expect(partial).toBeLessThan(ROWS);
      expect(partial % EVENT_BATCH).toBe(0);

      const small = await s.newJob(SEED.workflows.pdfEmail, 'while-big.pdf');
      expect((await s.t.files('PUT', small.fileUploadUrl, { body: samplePdf })).status).toBe(200);
      expect(await s.processed(small.id)).toMatchObject({ status: 'PROCESSING', sendingEventCount: 1 });
      // The small job is done before the big one has all its events.
      expect(await s.job(bigId)).toMatchObject({ status: 'PROCESSING', sendingEventCount: 0 });
      expect(await s.eventCount(bigId)).toBeLessThan(ROWS);

      // A row's original is its slice of the pack of originals: the header and that row.
      const first = (await s.t.api('GET', `/sending-events?jobId=${bigId}&maxItems=1`)).body.items[0];
      expect(first.sendingSourceFileReference).toBe('million.csv#row=1');
      const original = first.documents.find((d: { type: string }) => d.type === 'ORIGINAL');
      const link = await s.t.api(
        'GET',
        `/sending-events/${first.id}/files/${original.fileReference}/download-url`,
      );
      const file = await s.t.files('GET', link.body.url);
      expect(file.raw.toString()).toBe('email;name;amount\r\nuser1@example.com;Name, 1;1\r\n');
    },
    SLOW,
  );

  it(
    'stops between two batches, and the next start goes on after the last batch written',
    async () => {
      const before = await s.eventCount(bigId);
      await s.t.stop({ keepState: true });
      // A stop removes its spool of items; one a crash left is removed at the next start.
      const blobs = path.join(s.t.stateDir, 'blobs');
      expect(readdirSync(blobs).filter((f) => f.endsWith('.items'))).toEqual([]);
      writeFileSync(path.join(blobs, 'blob_crashed.items'), '{}\n');
      await s.start();
      expect(existsSync(path.join(blobs, 'blob_crashed.items'))).toBe(false);
      // Stopped with the job half written: the stop did not wait for the million rows.
      const atStart = s.t.sandbox.ctx.store.get<JobRecord>('job', bigId)?.eventsCreated ?? 0;
      expect(atStart).toBeGreaterThanOrEqual(before);
      expect(atStart).toBeLessThan(ROWS);
      const resumed = await until(async () => {
        const n = await s.eventCount(bigId);
        return n > atStart ? n : undefined;
      }, SLOW);
      expect(resumed).toBeLessThan(ROWS);
      // Each row once and in order: nothing written twice across the stop.
      const refs = [
        ...s.t.sandbox.ctx.store.iterate<SendingEventRecord>('sending-event', { parentId: bigId }),
      ].map((e) => e.sendingSourceFileReference);
      expect(refs.length).toBeGreaterThan(atStart);
      expect(refs.findIndex((ref, i) => ref !== `million.csv#row=${i + 1}`)).toBe(-1);
    },
    SLOW,
  );
});
