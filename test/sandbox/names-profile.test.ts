import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { isFinalSendingEvent } from '../../src/domain/wire.js';
import type { SandboxEvent } from '../../src/sandbox/context.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const WAITING = { spec: 'AWAITING_FILE_UPLOAD', reference: 'AWAITING_FOR_FILE' } as const;

describe.each(NAMES_PROFILES)('names profile %s', (names) => {
  let t: TestSandbox;
  const emitted: SandboxEvent[] = [];
  beforeAll(async () => {
    t = await startTestSandbox({ names });
    const original = t.sandbox.ctx.emit;
    t.sandbox.ctx.emit = (event) => {
      emitted.push(event);
      original(event);
    };
  });
  afterAll(async () => {
    await t?.stop();
  });

  it(`answers the waiting job as ${WAITING[names]} and fires job webhooks as the profile says`, async () => {
    const created = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: SEED.workflows.pdfEmail, filename: 'n.pdf' },
    });
    const jobId = created.body.id as string;
    expect((await t.api('GET', `/jobs/${jobId}`)).body.status).toBe(WAITING[names]);
    const listed = (await t.api('GET', '/jobs')).body.items.find((j: { id: string }) => j.id === jobId);
    expect(listed.status).toBe(WAITING[names]);
    expect(
      (await t.control('GET', '/jobs')).body.items.find((j: { id: string }) => j.id === jobId),
    ).toMatchObject({ status: WAITING[names] });

    expect(
      (await t.files('PUT', created.body.fileUploadUrl, { body: await makePdf('Email: n@example.com') }))
        .status,
    ).toBe(200);
    await t.sandbox.settle();
    await until(async () => {
      await t.advance(60_000);
      const items = (await t.api('GET', `/sending-events?jobId=${jobId}`)).body.items;
      return items.length === 1 && items.every(isFinalSendingEvent) ? items : undefined;
    });
    await until(async () =>
      (await t.api('GET', `/jobs/${jobId}`)).body.status === 'COMPLETED' ? true : undefined,
    );

    const jobEvents = emitted.filter((e) => e.type === 'job.status.changed' && e.data['jobId'] === jobId);
    expect(jobEvents.map((e) => e.data)).toEqual(
      names === 'spec'
        ? [
            { jobId, status: 'PROCESSING', previousStatus: 'AWAITING_FILE_UPLOAD' },
            { jobId, status: 'COMPLETED', previousStatus: 'PROCESSING' },
          ]
        : // The reference fires at final and action-required statuses only.
          [{ jobId, status: 'COMPLETED', previousStatus: 'PROCESSING' }],
    );
  });

  it('stores and shows the internal name of a webhook subscription, required by the reference only', async () => {
    const url = 'http://127.0.0.1:9/hooks';
    const unnamed = await t.api('POST', '/webhooks', { body: { url, eventTypes: ['job.status.changed'] } });
    if (names === 'reference') {
      expect(unnamed.status).toBe(400);
      expect(unnamed.body.errors).toEqual([{ field: 'name', message: 'the internal name is required' }]);
    } else {
      expect(unnamed.status).toBe(201);
      expect(unnamed.body).not.toHaveProperty('name');
    }
    const named = await t.api('POST', '/webhooks', {
      body: { url, eventTypes: ['job.status.changed'], name: 'ERP statuses' },
    });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ name: 'ERP statuses', secret: expect.stringMatching(/^whsec_/) });
    const id = named.body.id as string;
    expect((await t.api('GET', `/webhooks/${id}`)).body.name).toBe('ERP statuses');
    const renamed = await t.api('PATCH', `/webhooks/${id}`, { body: { name: 'ERP' } });
    expect(renamed.body).toMatchObject({ id, name: 'ERP' });
    const list = (await t.api('GET', '/webhooks')).body.items;
    expect(list.find((w: { id: string }) => w.id === id)).toMatchObject({ name: 'ERP' });
    expect(list.every((w: object) => !('secret' in w))).toBe(true);
  });
});
