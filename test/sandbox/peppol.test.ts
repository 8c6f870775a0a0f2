import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peppolDocumentSchema } from '../../src/domain/wire.js';
import { addPeppolDocument } from '../../src/sandbox/seed.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, startHarness } from './webhooks-harness.js';

const examples = new URL('../../src/sandbox/seed-data/peppol/', import.meta.url);
const exampleFiles = readdirSync(examples).filter((f) => f.endsWith('.xml'));

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

type Doc = { id: string; senderId: string; createdAt: string; fileName: string; documentType: string };
const ids = (items: Doc[]) => items.map((d) => d.id);

describe('GET /peppol-incoming-documents', () => {
  it('lists the seeded example documents, newest first by default', async () => {
    const res = await h.call('GET', '/peppol-incoming-documents');
    expect(res.status).toBe(200);
    expect(res.body.totalItems).toBe(exampleFiles.length);
    const items: Doc[] = res.body.items;
    expect(items.map((d) => d.fileName).sort()).toEqual([...exampleFiles].sort());
    for (const item of items) {
      expect(peppolDocumentSchema.safeParse(item).success).toBe(true);
      expect(item).not.toHaveProperty('companyId');
    }
    const times = items.map((d) => Date.parse(d.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(items.find((d) => d.fileName === 'base-creditnote-correction.xml')?.documentType).toBe(
      'CreditNote',
    );
  });

  it('sorts ascending with sortOrder=asc and filters on from/until', async () => {
    const asc: Doc[] = (
      await h.call('GET', '/peppol-incoming-documents?sortOrder=asc&sortField=lastModifiedAt')
    ).body.items;
    const desc: Doc[] = (await h.call('GET', '/peppol-incoming-documents')).body.items;
    expect(ids(asc)).toEqual(ids(desc).reverse());
    const from = asc[2]!.createdAt;
    const until = asc[5]!.createdAt;
    const res = await h.call('GET', `/peppol-incoming-documents?sortOrder=asc&from=${from}&until=${until}`);
    expect(ids(res.body.items)).toEqual(ids(asc.slice(2, 5)));
    expect(res.body.totalItems).toBe(3);
  });

  it('pages with after and maxItems in the chosen order', async () => {
    const all: Doc[] = (await h.call('GET', '/peppol-incoming-documents?sortOrder=asc')).body.items;
    const page = await h.call(
      'GET',
      `/peppol-incoming-documents?sortOrder=asc&maxItems=3&after=${all[3]!.id}`,
    );
    expect(ids(page.body.items)).toEqual(ids(all.slice(4, 7)));
  });

  it('answers 400 for invalid sort, dates, after and maxItems', async () => {
    for (const query of [
      'sortField=id',
      'sortOrder=up',
      'from=yesterday',
      'after=ppl_nope',
      'maxItems=5000',
    ]) {
      const res = await h.call('GET', `/peppol-incoming-documents?${query}`);
      expect(res.status, query).toBe(400);
    }
  });

  it('shows a managed company none of the partner documents', async () => {
    const res = await h.call('GET', '/peppol-incoming-documents', {
      headers: { 'x-managed-company-id': SEED.managedCompanyId },
    });
    expect(res.body).toEqual({ items: [], totalItems: 0 });
  });
});

describe('one incoming document', () => {
  it('answers the record by sender and id, and 404 for a wrong sender or id', async () => {
    const [doc] = (await h.call('GET', '/peppol-incoming-documents?maxItems=1')).body.items as Doc[];
    const sender = encodeURIComponent(doc!.senderId);
    const res = await h.call('GET', `/peppol-incoming-documents/sender/${sender}/document/${doc!.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(doc);
    expect((await h.call('GET', `/peppol-incoming-documents/sender/0000:x/document/${doc!.id}`)).status).toBe(
      404,
    );
    expect(
      (await h.call('GET', `/peppol-incoming-documents/sender/${sender}/document/ppl_nope`)).status,
    ).toBe(404);
  });

  it('gives a 10-minute pre-signed URL that downloads the UBL XML unchanged, then expires', async () => {
    const xml = readFileSync(new URL('base-example.xml', examples), 'utf8');
    const record = addPeppolDocument(h.sandbox.ctx, xml, SEED.partnerCompanyId, { fileName: 'fresh.xml' });
    const before = Date.parse((await h.call('GET', '/health')).body.time);
    const res = await h.call(
      'GET',
      `/peppol-incoming-documents/sender/${record.senderId}/document/${record.id}/download-url`,
    );
    expect(res.status).toBe(200);
    const validity = Date.parse(res.body.expiresAt) - before;
    expect(validity).toBeGreaterThanOrEqual(10 * 60 * 1000 - 1000);
    expect(validity).toBeLessThanOrEqual(10 * 60 * 1000 + 1000);
    expect(res.body.url.startsWith(h.sandbox.urls.files)).toBe(true);

    const download = await request(res.body.url, { dispatcher: h.agent });
    expect(download.statusCode).toBe(200);
    expect(await download.body.text()).toBe(xml);

    h.sandbox.advanceClock(11 * 60 * 1000);
    const expired = await request(res.body.url, { dispatcher: h.agent });
    await expired.body.dump();
    expect(expired.statusCode).toBe(403);
  });
});
