import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxEvent } from '../../src/sandbox/context.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

let t: TestSandbox;
const emitted: SandboxEvent[] = [];
beforeAll(async () => {
  // Speed 1: each step takes seconds of sandbox time, which the test moves by hand.
  t = await startTestSandbox({ speed: 1 });
  const original = t.sandbox.ctx.emit;
  t.sandbox.ctx.emit = (event) => {
    emitted.push(event);
    original(event);
  };
});
afterAll(async () => {
  await t?.stop();
});

const wordJob = (email: string, sendingEventExecutionDateUtc?: string) =>
  t.api('POST', '/jobs/payload-word', {
    body: {
      workflowId: SEED.workflows.payloadWordEmail,
      jobName: `to ${email}`,
      filename: 'w.docx',
      ...(sendingEventExecutionDateUtc ? { sendingEventExecutionDateUtc } : {}),
      payload: {
        channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: email }],
        extraInfoIdentifiers: [],
        templateData: { a: 1 },
      },
    },
  });

interface ListedEvent {
  id: string;
  jobId: string;
  documents: { type: string; fileReference: string; size: number; md5: string | null }[];
}

const eventOf = async (jobId: string) => (await t.api('GET', `/sending-events?jobId=${jobId}`)).body.items[0];

describe('sending event lifecycle', () => {
  it('steps through the business states on the sandbox clock and tells the webhooks at each change', async () => {
    const job = await wordJob('steps@example.com');
    expect(job.status).toBe(201);
    const jobId = job.body.id as string;
    const seen: string[] = [];
    const record = async () => {
      const e = await eventOf(jobId);
      if (seen.at(-1) !== e.businessStatus) seen.push(e.businessStatus);
      return e;
    };
    await record();
    for (let i = 0; i < 12; i++) {
      await t.advance(1000);
      await record();
    }
    const final = await until(async () => {
      const e = await record();
      return e.status === 'SUCCESS' ? e : undefined;
    });
    expect(seen).toEqual(['NOT_STARTED', 'SCHEDULED_FOR_EXECUTION', 'IN_PROGRESS', 'SUCCESS']);
    expect(Date.parse(final.endDate) - Date.parse(final.startDate)).toBe(10_000);
    expect(final.taskDetails[0]).toMatchObject({ status: 'SUCCESS' });
    expect((await t.api('GET', `/jobs/${jobId}`)).body.status).toBe('COMPLETED');

    const mine = emitted.filter((e) => e.data['jobId'] === jobId);
    expect(
      mine.filter((e) => e.type === 'sending.event.status.changed').map((e) => e.data['businessStatus']),
    ).toEqual(['SCHEDULED_FOR_EXECUTION', 'IN_PROGRESS', 'SUCCESS']);
    // Generated files only: the original was the caller's own upload.
    expect(mine.filter((e) => e.type === 'sending.event.file.ready').map((e) => e.data['type'])).toEqual([
      'DELIVERY_PROOF',
      'SUBMISSION_REPORT',
    ]);
    expect(mine.filter((e) => e.type === 'job.status.changed').map((e) => e.data)).toEqual([
      { jobId, status: 'COMPLETED', previousStatus: 'PROCESSING' },
    ]);
    expect(mine.every((e) => e.companyId === SEED.partnerCompanyId)).toBe(true);
  });

  it('lists every sending event on the control API with the MD5 of each proof it holds, as downloaded', async () => {
    const job = await wordJob('listed@example.com');
    const jobId = job.body.id as string;
    for (let i = 0; i < 12; i++) await t.advance(1000);
    const final = await until(async () => {
      const e = await eventOf(jobId);
      return e.status === 'SUCCESS' ? e : undefined;
    });
    const listed = ((await t.control('GET', '/sending-events')).body.items as ListedEvent[]).find(
      (e) => e.jobId === jobId,
    );
    expect(listed).toMatchObject({ id: final.id, businessStatus: 'SUCCESS', status: 'SUCCESS', final: true });
    // The original (the rendered document) without its MD5; the generated ones with theirs.
    expect(listed!.documents.map((d) => [d.type, d.md5 === null])).toEqual([
      ['ORIGINAL', true],
      ['DELIVERY_PROOF', false],
      ['SUBMISSION_REPORT', false],
    ]);
    for (const doc of listed!.documents.filter((d) => d.md5 !== null)) {
      const { url } = (
        await t.api('GET', `/sending-events/${final.id}/files/${doc.fileReference}/download-url`)
      ).body as { url: string };
      const bytes = (await t.files('GET', url)).raw;
      expect(doc).toMatchObject({ size: bytes.length, md5: createHash('md5').update(bytes).digest('hex') });
    }
  });

  it('holds a sending event scheduled until its execution date', async () => {
    const at = new Date(t.sandbox.ctx.clock.now() + 3600_000).toISOString();
    const job = await wordJob('later@example.com', at);
    await t.advance(60_000);
    const waiting = await eventOf(job.body.id);
    expect(waiting).toMatchObject({
      businessStatus: 'SCHEDULED_FOR_EXECUTION',
      executionDateUtc: at,
      status: 'IN_PROGRESS',
    });
    await t.advance(3600_000);
    const done = await until(async () => {
      const e = await eventOf(job.body.id);
      return e.status === 'SUCCESS' ? e : undefined;
    });
    expect(Date.parse(done.endDate)).toBeGreaterThan(Date.parse(at));
  });

  it('starts the tasks of a payload-pdf job’s sending events at its execution date, not before', async () => {
    const body = JSON.parse(
      readFileSync(
        new URL('../../samples/payload-pdf-print/letter-with-payment.json', import.meta.url),
        'utf8',
      ),
    );
    const at = new Date(t.sandbox.ctx.clock.now() + 2 * 3600_000).toISOString();
    const job = await t.api('POST', '/jobs/payload-pdf', {
      body: { ...body, sendingEventExecutionDateUtc: at },
    });
    expect(job.status).toBe(201);
    const pdf = readFileSync(
      new URL('../../samples/payload-pdf-print/letter-with-payment.pdf', import.meta.url),
    );
    expect((await t.files('PUT', job.body.fileUploadUrl, { body: pdf })).status).toBe(200);
    const created = await until(() => eventOf(job.body.id));
    expect(created.executionDateUtc).toBe(at);
    // A second before the date: scheduled, no task started.
    await t.advance(Date.parse(at) - t.sandbox.ctx.clock.now() - 1000);
    const waiting = await eventOf(job.body.id);
    expect(waiting.businessStatus).toBe('SCHEDULED_FOR_EXECUTION');
    expect(waiting.taskDetails.every((task: { startedAt: string | null }) => task.startedAt === null)).toBe(
      true,
    );
    await t.advance(1000);
    const started = await eventOf(job.body.id);
    expect(started.businessStatus).toBe('IN_PROGRESS');
    expect(started.taskDetails[0].startedAt).toBe(at);
  });

  it('finalises an event again at the next tick after its finalisation failed, the clock standing still', async () => {
    const job = await wordJob('retry@example.com');
    const store = t.sandbox.ctx.store;
    const transaction = store.transaction.bind(store);
    let failures = 0;
    store.transaction = ((fn: () => unknown) => {
      if (failures === 0) {
        failures++;
        throw new Error('disk hiccup');
      }
      return transaction(fn);
    }) as typeof store.transaction;
    try {
      // Due and final: its first finalisation fails on the store.
      await t.advance(10_000);
      expect(failures).toBe(1);
      // No more time passes: only the ticks of the requests and the timer can finish it.
      const done = await until(async () => {
        const e = await eventOf(job.body.id);
        return e.status === 'SUCCESS' ? e : undefined;
      });
      expect(done.businessStatus).toBe('SUCCESS');
    } finally {
      store.transaction = transaction;
    }
  });
});
