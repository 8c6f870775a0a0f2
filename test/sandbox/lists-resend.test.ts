import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFinalSendingEvent } from '../../src/domain/wire.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

let t: TestSandbox;
const jobIds: string[] = [];
beforeAll(async () => {
  t = await startTestSandbox();
  for (let i = 0; i < 7; i++) {
    const res = await t.api('POST', '/jobs/single-file', {
      body: { workflowId: SEED.workflows.pdfEmail, filename: `f${i}.pdf` },
    });
    jobIds.push(res.body.id);
    await t.advance(1000);
  }
});
afterAll(async () => {
  await t?.stop();
});

describe('GET /jobs', () => {
  it('pages through every job in creation order with after and maxItems', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await t.api('GET', `/jobs?maxItems=3${after ? `&after=${after}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.totalItems).toBe(7);
      const ids = res.body.items.map((j: { id: string }) => j.id);
      if (ids.length === 0) break;
      seen.push(...ids);
      after = ids.at(-1);
    }
    expect(seen).toEqual(jobIds);
  });

  it('answers 400 to an unknown after, to maxItems 0 or 1001, and to a badly formatted from', async () => {
    expect((await t.api('GET', '/jobs?after=job_unknown')).status).toBe(400);
    expect((await t.api('GET', '/jobs?maxItems=0')).status).toBe(400);
    expect((await t.api('GET', '/jobs?maxItems=1001')).status).toBe(400);
    expect((await t.api('GET', '/jobs?maxItems=1000')).status).toBe(200);
    expect((await t.api('GET', '/jobs?from=2026-11-21')).status).toBe(400);
  });

  it('filters on startDate with from/until (exclusive) and on workflowId', async () => {
    const all = (await t.api('GET', '/jobs')).body.items as { id: string; startDate: string }[];
    const from = all[1]!.startDate;
    const until = all[5]!.startDate;
    const res = await t.api('GET', `/jobs?from=${from}&until=${until}`);
    expect(res.body.items.map((j: { id: string }) => j.id)).toEqual(jobIds.slice(2, 5));
    expect((await t.api('GET', `/jobs?workflowId=${SEED.workflows.ubl}`)).body.totalItems).toBe(0);
  });
});

describe('sending events: list and resend', () => {
  it('refuses a resend before the event is final, re-sends a final one, and refuses to re-send a re-send', async () => {
    const created = await t.api('POST', '/jobs/payload-word', {
      body: {
        workflowId: SEED.workflows.payloadWordEmail,
        jobName: 'resend me',
        filename: 'r.docx',
        payload: {
          channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', value: 'a@example.com' }],
          extraInfoIdentifiers: [],
          templateData: {},
        },
      },
    });
    expect(created.status).toBe(201);
    const list = await t.api('GET', `/sending-events?jobId=${created.body.id}`);
    const source = list.body.items[0];
    expect((await t.api('POST', `/sending-events/${source.id}/resend`)).status).toBe(409);

    await until(async () => {
      await t.advance(60_000);
      const e = (await t.api('GET', `/sending-events/${source.id}`)).body;
      return isFinalSendingEvent(e) ? e : undefined;
    });
    const resent = await t.api('POST', `/sending-events/${source.id}/resend`);
    expect(resent.status).toBe(201);
    expect(resent.body).toMatchObject({
      resendOf: source.id,
      jobId: created.body.id,
      businessStatus: 'NOT_STARTED',
    });
    expect(resent.body.id).not.toBe(source.id);
    expect((await t.api('POST', `/sending-events/${resent.body.id}/resend`)).status).toBe(409);

    const final = await until(async () => {
      await t.advance(60_000);
      const e = (await t.api('GET', `/sending-events/${resent.body.id}`)).body;
      return isFinalSendingEvent(e) ? e : undefined;
    });
    expect(final.businessStatus).toBe('SUCCESS');
    const unchanged = (await t.api('GET', `/sending-events/${source.id}`)).body;
    expect(unchanged.resendOf).toBeNull();

    const byJob = await t.api('GET', `/sending-events?jobId=${created.body.id}`);
    expect(byJob.body.items.map((e: { id: string }) => e.id)).toEqual([source.id, resent.body.id]);
    const success = await t.api(
      'GET',
      `/sending-events?jobId=${created.body.id}&businessStatus=SUCCESS&maxItems=1`,
    );
    expect(success.body).toMatchObject({ totalItems: 2 });
    expect(success.body.items).toHaveLength(1);
    expect((await t.api('GET', '/sending-events?after=se_unknown')).status).toBe(400);
    expect((await t.api('GET', '/sending-events/se_unknown')).status).toBe(404);
  });
});
