import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { caught } from './support/caught.js';
import { sandboxClientOptions } from './support/sandbox-client.js';

let dir: string;
let sandbox: RunningSandbox;
let client: DocexClient;

const address = {
  street: 'Rue Neuve',
  streetNr: '1',
  postalCode: '1000',
  city: 'Brussels',
  countryCode: 'BE',
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-client-resources-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'state'), log: silentLogger(), speed: 1000 });
  client = new DocexClient(sandboxClientOptions(sandbox));
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('resources against the sandbox', () => {
  it('creates, reads, updates and lists departments and users for a managed company', async () => {
    const managed = { managedCompanyId: SEED.managedCompanyId };
    const dep = await client.departments.create(
      { name: 'Billing', headAddress: address, hasSeparateInvoicing: false, isActive: true },
      managed,
    );
    const renamed = await client.departments.update(dep.id, { name: 'Billing BE' }, managed);
    const user = await client.users.create(
      {
        username: 'ann',
        role: 'CLIENT_OPERATOR',
        departments: [dep.id],
        firstName: 'Ann',
        lastName: 'Peeters',
        preferredLanguage: 'NL',
        emailAddress: 'ann@example.com',
        enabled: true,
        hasQERDSMandate: false,
      },
      managed,
    );
    const deps = [];
    for await (const d of client.departments.iterate({ pageSize: 1 }, managed)) deps.push(d.id);
    const users = await client.users.list({}, managed);
    const companies = await client.companies.list();
    const noHeader = await caught(
      client.departments.create({
        name: 'X',
        headAddress: address,
        hasSeparateInvoicing: false,
        isActive: true,
      }),
    );
    expect(dep.companyId).toBe(SEED.managedCompanyId);
    expect(renamed.name).toBe('Billing BE');
    expect((await client.departments.get(dep.id, managed)).name).toBe('Billing BE');
    expect(user.departments).toEqual([dep.id]);
    expect(deps).toContain(dep.id);
    expect(users.items.map((u) => u.id)).toContain(user.id);
    expect(companies.items.map((c) => c.id)).toContain(SEED.managedCompanyId);
    expect(noHeader.status).toBeGreaterThanOrEqual(400);
  });

  it('manages a webhook subscription through create, update, reset-secret, test and delete', async () => {
    const created = await client.webhooks.create({
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['job.status.changed', 'sending.event.file.ready'],
    });
    const updated = await client.webhooks.update(created.id, { enabled: false, description: 'ERP' });
    const reset = await client.webhooks.resetSecret(created.id);
    const listed = await client.webhooks.list();
    const tested = await client.webhooks.test(created.id, 'job.status.changed');
    const ambiguous = await caught(client.webhooks.test(created.id));
    await client.webhooks.delete(created.id);
    const gone = await caught(client.webhooks.get(created.id));
    expect(created.secret).toMatch(/^whsec_/);
    expect(reset.secret).toMatch(/^whsec_/);
    expect(reset.secret).not.toBe(created.secret);
    expect(updated.enabled).toBe(false);
    expect(listed.items.find((s) => s.id === created.id)?.secret).toBeUndefined();
    expect(tested.status).toBe(0);
    expect(ambiguous.code).toBe('DOCEX_API_400');
    expect(gone.code).toBe('DOCEX_API_404');
  });

  it('follows a job to final sending events, resends one, and reads usage and its details', async () => {
    const pdf = await PDFDocument.create();
    pdf.addPage();
    const file = path.join(dir, 'letter.pdf');
    writeFileSync(file, await pdf.save());
    const created = await client.jobs.createSingleFile({
      workflowId: SEED.workflows.pdfEmail,
      filename: 'letter.pdf',
    });
    await client.jobs.uploadFile(created.fileUploadUrl, file);
    // The service turns an upload into sending events after answering the PUT.
    await sandbox.settle();
    const start = Date.now();
    let event = (await client.sendingEvents.list({ jobId: created.id })).items[0]!;
    while (!['SUCCESS', 'FAILURE', 'REJECTED'].includes(event.businessStatus) && Date.now() - start < 5_000) {
      sandbox.tick();
      await sandbox.settle();
      event = await client.sendingEvents.get(event.id);
    }
    const resent = await client.sendingEvents.resend(event.id);
    const again = await caught(client.sendingEvents.resend(resent.id));
    const from = new Date(Date.now() - 3_600_000);
    const until = new Date(Date.now() + 3_600_000);
    const usage = await client.usage.get({ from, until });
    const details = [];
    for await (const e of client.usage.iterateDetails({ from, until, maxItems: 1 })) details.push(e);
    expect(resent.resendOf).toBe(event.id);
    expect(again.code).toBe('DOCEX_API_409');
    expect(usage.companyId).toBe(SEED.partnerCompanyId);
    expect(details.length).toBeGreaterThan(0);
  });

  it('lists incoming Peppol documents and downloads one as UBL XML', async () => {
    const page = await client.peppol.list({ sortOrder: 'asc', maxItems: 5 });
    expect(page.items.length).toBeGreaterThan(0);
    const first = page.items[0]!;
    const doc = await client.peppol.get(first.senderId, first.id);
    const link = await client.peppol.downloadUrl(first.senderId, first.id);
    const target = path.join(dir, 'peppol.xml');
    await client.peppol.downloadFile(link.url, target);
    expect(doc.id).toBe(first.id);
    expect(readFileSync(target, 'utf8')).toContain('<');
  });
});
