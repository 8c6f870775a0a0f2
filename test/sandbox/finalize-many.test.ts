/**
 * Issue 30: a night of many sending events. A data file of 3,000 rows becomes 3,000 events whose
 * finalisations (each with its proofs) all fall due at one clock advance; a stop with all of them
 * queued waits for none, and the next start finalises every one and completes the job. Proved by
 * what the store holds after the stop, never by a clock.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { isFinalSendingEvent } from '../../src/domain/wire.js';
import type { BlobRecord, SendingEventRecord } from '../../src/sandbox/records.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const EVENTS = 3000;
/** Writing 3,000 events and 6,000 proofs on two busy cores. */
const SLOW = 60_000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s1-finalize-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function finalCount(t: TestSandbox, jobId: string): number {
  let n = 0;
  for (const e of t.sandbox.ctx.store.iterate<SendingEventRecord>('sending-event', { parentId: jobId })) {
    if (isFinalSendingEvent(e)) n++;
  }
  return n;
}

describe(`a job of ${EVENTS} sending events`, () => {
  const stateDir = path.join(dir, 'state');
  // One clock across the restart, moved only by the test.
  const clock = new ManualClock(Date.now());
  let t: TestSandbox | undefined;
  afterAll(() => t?.stop());

  it(
    'stops with every finalisation queued without waiting for them, the next start finalises them all and completes the job, and a proof is made at each download, the same bytes each time, with no file behind it',
    async () => {
      t = await startTestSandbox({ stateDir, clock, speed: 1 });
      const created = await t.api('POST', '/jobs/single-file', {
        body: { workflowId: SEED.workflows.dataFile, filename: 'night.csv' },
      });
      expect(created.status).toBe(201);
      const jobId = created.body.id as string;
      const rows = Array.from({ length: EVENTS }, (_, i) => `Recipient ${i},recipient-${i}@example.com`);
      const csv = `name,email\r\n${rows.join('\r\n')}\r\n`;
      expect((await t.files('PUT', created.body.fileUploadUrl, { body: csv })).status).toBe(200);
      await until(async () => {
        const job = (await t!.api('GET', `/jobs/${jobId}`)).body;
        return job.sendingEventCount === EVENTS ? job : undefined;
      }, SLOW);

      // Every event falls due at once; the stop comes before any of their finalisations ran.
      void t.sandbox.advanceClock(60_000);
      await t.stop({ keepState: true });

      t = await startTestSandbox({ stateDir, clock, speed: 1 });
      expect(finalCount(t, jobId)).toBe(0);
      await t.advance(0);
      expect(finalCount(t, jobId)).toBe(EVENTS);
      const job = (await t.api('GET', `/jobs/${jobId}`)).body;
      expect(job.status).toBe('COMPLETED');

      // Each event's proofs are PDFs a reader opens, naming their event.
      const first = (await t.api('GET', `/sending-events?jobId=${jobId}&maxItems=1`)).body.items[0];
      const proof = first.documents.find((d: { type: string }) => d.type === 'DELIVERY_PROOF');
      const link = await t.api(
        'GET',
        `/sending-events/${first.id}/files/${proof.fileReference}/download-url`,
      );
      const download = await t.files('GET', link.body.url);
      const pdf = await PDFDocument.load(download.raw);
      expect(pdf.getPageCount()).toBe(1);
      expect(pdf.getSubject()).toBe(`Delivery proof of sending event ${first.id}`);
      // Made when downloaded, not kept: no file behind any proof, and every download the same bytes.
      const sandbox = t.sandbox;
      const blobs = readdirSync(sandbox.ctx.blobDir);
      const proofBlob = sandbox.ctx.store.get<BlobRecord>('blob', proof.fileReference);
      expect(proofBlob?.file).toBe('');
      expect(blobs.some((name) => name.startsWith(proof.fileReference))).toBe(false);
      expect(download.headers['content-length']).toBe(String(download.raw.length));
      const again = await t.files('GET', link.body.url);
      expect(again.raw.equals(download.raw)).toBe(true);
    },
    SLOW,
  );
});
