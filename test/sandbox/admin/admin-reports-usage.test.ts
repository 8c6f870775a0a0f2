import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { type AdminHarness, addUsageEvents, startAdminHarness } from './admin-harness.js';

let h: AdminHarness;
const P = SEED.partnerCompanyId;
const M = SEED.managedCompanyId;
const FROM = '2026-10-01T00:00:00.000Z';
const UNTIL = '2026-11-01T00:00:00.000Z';
let partnerEvents: string[];
let managedEvents: string[];

beforeAll(async () => {
  h = await startAdminHarness();
  partnerEvents = addUsageEvents(h.sandbox, P, 3, '2026-10-05T10:00:00.000Z', SEED.partnerDepartmentId);
  partnerEvents.push(...addUsageEvents(h.sandbox, P, 1, '2026-10-06T10:00:00.000Z'));
  managedEvents = addUsageEvents(h.sandbox, M, 2, '2026-10-07T10:00:00.000Z', SEED.managedDepartmentId);
  addUsageEvents(h.sandbox, SEED.otherCompanyId, 2, '2026-10-08T10:00:00.000Z');
  addUsageEvents(h.sandbox, P, 1, '2026-11-01T00:00:00.000Z'); // at `until`: excluded
});
afterAll(async () => {
  await h?.stop();
});

describe('reports', () => {
  it('creates a USAGE report whose pre-signed URL serves the CSV, then reads, finds and deletes it', async () => {
    const created = await h.call('POST', `/api/company/${P}/reports`, {
      body: { companyId: P, reportType: 'USAGE', from: FROM, until: UNTIL },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['expiresAt', 'id', 'url']);
    const id = created.body.id as string;

    const csv = await h.get(created.body.url);
    expect(csv.status).toBe(200);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,timestamp,companyId,departmentId,jobId,sendingEventId,channel,unit,quantity');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(partnerEvents);

    const report = await h.call('GET', `/api/company/${P}/reports/${id}`);
    expect(report.body).toMatchObject({
      id,
      companyId: P,
      reportType: 'USAGE',
      status: 'READY',
      from: FROM,
      until: UNTIL,
    });
    expect(report.body.fileName).toMatch(/\.csv$/);
    expect(report.body).not.toHaveProperty('blobId');

    const url = await h.call('GET', `/api/company/${P}/reports/${id}/download-url`);
    expect(url.status).toBe(200);
    expect(typeof url.body).toBe('string');
    expect((await h.get(url.body)).text).toBe(csv.text);

    const found = await h.call('POST', `/api/company/${P}/reports/search`, { body: { reportType: 'USAGE' } });
    expect(found.body.items.map((r: { id: string }) => r.id)).toContain(id);
    const none = await h.call('POST', `/api/company/${P}/reports/search`, {
      body: { reportType: 'INVOICES' },
    });
    expect(none.body).toEqual({ items: [] });

    expect((await h.call('DELETE', `/api/company/${P}/reports/${id}`)).body).toEqual({ success: true });
    expect((await h.call('GET', `/api/company/${P}/reports/${id}`)).status).toBe(404);
    expect((await h.get(created.body.url)).status).toBe(404);
  });

  it('limits a department report to that department and answers 400 for a bad range or body', async () => {
    const created = await h.call('POST', `/api/company/${M}/reports`, {
      body: {
        companyId: M,
        departmentId: SEED.managedDepartmentId,
        reportType: 'USAGE',
        from: FROM,
        until: UNTIL,
      },
    });
    const rows = (await h.get(created.body.url)).text.trimEnd().split('\r\n').slice(1);
    expect(rows.map((l) => l.split(',')[0])).toEqual(managedEvents);

    const base = { companyId: P, reportType: 'SENDINGS', from: FROM, until: UNTIL };
    for (const field of ['companyId', 'reportType', 'from', 'until']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      const answer = await h.call('POST', `/api/company/${P}/reports`, { body });
      expect(answer.status).toBe(400);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([field]);
    }
    const reversed = await h.call('POST', `/api/company/${P}/reports`, {
      body: { ...base, from: UNTIL, until: FROM },
    });
    expect(reversed.status).toBe(400);
    const badType = await h.call('POST', `/api/company/${P}/reports`, {
      body: { ...base, reportType: 'TAXES' },
    });
    expect(badType.status).toBe(400);
  });

  it('writes a SENDINGS report with only the header when nothing was sent', async () => {
    const created = await h.call('POST', `/api/company/${P}/reports`, {
      body: { companyId: P, reportType: 'SENDINGS', from: FROM, until: UNTIL },
    });
    expect((await h.get(created.body.url)).text).toBe(
      'id,jobId,jobName,workflowId,departmentId,startDate,endDate,status,businessStatus\r\n',
    );
  });
});

describe('news items', () => {
  it('creates an item (201 with id and createdAt) and deletes it once', async () => {
    const body = { title: 'Maintenance', body: 'Sunday 02:00-04:00', language: 'EN', publishFrom: FROM };
    const created = await h.call('POST', '/api/news-items', { body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(body);
    expect(created.body.createdAt).toMatch(/Z$/);
    expect((await h.call('DELETE', `/api/news-items/${created.body.id}`)).body).toEqual({ success: true });
    expect((await h.call('DELETE', `/api/news-items/${created.body.id}`)).status).toBe(404);
  });

  it('answers 400 for a missing title, body or language, an unknown language and a reversed window', async () => {
    const base = { title: 'T', body: 'B', language: 'FR' };
    for (const field of ['title', 'body', 'language']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      expect((await h.call('POST', '/api/news-items', { body })).status).toBe(400);
    }
    expect((await h.call('POST', '/api/news-items', { body: { ...base, language: 'DE' } })).status).toBe(400);
    const reversed = { ...base, publishFrom: UNTIL, publishUntil: FROM };
    expect((await h.call('POST', '/api/news-items', { body: reversed })).status).toBe(400);
  });
});

describe('usage details', () => {
  const q = (extra = '') => `/api/usage/details?from=${FROM}&until=${UNTIL}${extra}`;

  it('without companyId scrolls every company the partner administers, to the end, by nextCursor', async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.call('GET', q(`&maxItems=2${cursor ? `&cursor=${cursor}` : ''}`));
      expect(page.status).toBe(200);
      ids.push(...page.body.items.map((e: { id: string }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(ids).toEqual([...partnerEvents, ...managedEvents]);
  });

  it('restricts to a company, and to department-scoped usage with departmentIds', async () => {
    const managed = await h.call('GET', q(`&companyId=${M}`));
    expect(managed.body.items.map((e: { id: string }) => e.id)).toEqual(managedEvents);
    const departments = await h.call('GET', q(`&companyId=${P}&departmentIds=${SEED.partnerDepartmentId}`));
    expect(departments.body.items.map((e: { id: string }) => e.id)).toEqual(partnerEvents.slice(0, 3));
    expect((await h.call('GET', q(`&companyId=${SEED.otherCompanyId}`))).status).toBe(403);
  });

  it('answers 400 for an invalid date range, filters, page size or cursor', async () => {
    const bad = [
      `/api/usage/details?from=${UNTIL}&until=${FROM}`,
      `/api/usage/details?from=2026-10-01&until=${UNTIL}`,
      `/api/usage/details?until=${UNTIL}`,
      q('&maxItems=0'),
      q('&maxItems=1001'),
      q('&cursor=%%%'),
      q('&cursor=bm9wZQ'),
      q('&departmentIds='),
      q('&companyId='),
    ];
    for (const path of bad) {
      const answer = await h.call('GET', path);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
    }
  });
});
