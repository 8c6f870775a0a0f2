import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { workflowSchema } from '../../src/domain/wire.js';
import { UploadReader } from '../../src/sandbox/content/upload-reader.js';
import { SandboxClock, type SandboxContext, type SandboxEvent } from '../../src/sandbox/context.js';
import {
  PEPPOL_DOCUMENT_KIND,
  type PeppolDocumentRecord,
  peppolBlobPath,
} from '../../src/sandbox/peppol-documents.js';
import { addPeppolDocument, seedSandbox } from '../../src/sandbox/seed.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { Store } from '../../src/sandbox/store.js';

let dir: string;
let store: Store;
let events: SandboxEvent[];
let ctx: SandboxContext;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s2-seed-'));
  store = new Store(path.join(dir, 'sandbox.db'));
  events = [];
  let n = 0;
  ctx = {
    store,
    clock: new SandboxClock(new ManualClock()),
    log: silentLogger(),
    settings: {
      uploadWindowMs: 7_200_000,
      speed: 1,
      maxUploadBytes: 1e9,
      downloadUrlValidityMs: 600_000,
      names: 'spec',
    },
    urls: { api: '', auth: '', files: '', control: '' },
    signer: { sign: () => '', verify: () => ({ path: '', expiresAt: 0 }) },
    blobDir: dir,
    uploadReader: new UploadReader(),
    emit: (e) => events.push(e),
    newId: (prefix) => `${prefix}_${(n++).toString().padStart(4, '0')}`,
  };
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('seedSandbox', () => {
  it('seeds four companies (two of them managed by the partner), departments, users, every workflow and the eleven Peppol examples', () => {
    seedSandbox(ctx);
    expect(store.count('company')).toBe(4);
    expect(store.get('company', SEED.partnerCompanyId)).toMatchObject({
      role: 'TECHNOLOGY_PARTNER',
      managedCompanyIds: [SEED.managedCompanyId, SEED.secondManagedCompanyId],
    });
    for (const id of [SEED.managedCompanyId, SEED.secondManagedCompanyId]) {
      expect(store.get('company', id)).toMatchObject({
        role: 'MANAGED_COMPANY',
        technologyPartnerId: SEED.partnerCompanyId,
      });
    }
    expect(store.get('department', SEED.secondManagedDepartmentId)).toMatchObject({
      companyId: SEED.secondManagedCompanyId,
    });
    expect(store.get('company', SEED.otherCompanyId)).toMatchObject({ role: 'REGULAR' });
    expect(store.count('department')).toBeGreaterThanOrEqual(3);
    expect(store.count('user')).toBeGreaterThanOrEqual(2);
    for (const id of Object.values(SEED.workflows)) {
      const wf = store.get('workflow', id);
      expect(wf, id).toBeDefined();
      expect(workflowSchema.safeParse(wf).success, id).toBe(true);
    }
    expect(store.list('workflow', { companyId: SEED.managedCompanyId }).map((w) => w.id)).toEqual([
      SEED.workflows.managedPdfEmail,
    ]);
    expect(store.list('workflow', { companyId: SEED.secondManagedCompanyId }).map((w) => w.id)).toEqual([
      SEED.workflows.secondManagedPdfEmail,
    ]);
    const docs = store.list<PeppolDocumentRecord>(PEPPOL_DOCUMENT_KIND, { companyId: SEED.partnerCompanyId });
    expect(docs).toHaveLength(11);
    for (const doc of docs) expect(existsSync(peppolBlobPath(dir, doc.id))).toBe(true);
    expect(events).toEqual([]);
  });

  it('leaves a store that already has companies untouched', () => {
    seedSandbox(ctx);
    const before = ['company', 'department', 'user', 'workflow', PEPPOL_DOCUMENT_KIND].map((k) =>
      store.count(k),
    );
    seedSandbox(ctx);
    expect(
      ['company', 'department', 'user', 'workflow', PEPPOL_DOCUMENT_KIND].map((k) => store.count(k)),
    ).toEqual(before);
  });
});

describe('addPeppolDocument', () => {
  it('stores the XML, a record with the UBL fields, and emits peppol.document.received', () => {
    const xml = readFileSync(
      new URL('../../src/sandbox/seed-data/peppol/base-creditnote-correction.xml', import.meta.url),
      'utf8',
    );
    const doc = addPeppolDocument(ctx, xml, SEED.managedCompanyId);
    expect(doc).toMatchObject({
      documentType: 'CreditNote',
      documentNumber: 'Snippet1',
      senderId: '0088:9482348239847239874',
      receiverId: '0002:FR23342',
      issueDate: '2017-11-13',
      fileName: 'CreditNote-Snippet1.xml',
      size: Buffer.byteLength(xml),
      createdAt: '2026-11-21T10:00:00.000Z',
      companyId: SEED.managedCompanyId,
    });
    expect(readFileSync(peppolBlobPath(dir, doc.id), 'utf8')).toBe(xml);
    expect(events).toEqual([
      {
        type: 'peppol.document.received',
        companyId: SEED.managedCompanyId,
        data: { documentId: doc.id, senderId: doc.senderId },
      },
    ]);
  });

  it('refuses XML that is not UBL and stores nothing', () => {
    expect(() => addPeppolDocument(ctx, '<note/>')).toThrow(/not a UBL document/);
    expect(store.count(PEPPOL_DOCUMENT_KIND)).toBe(0);
    expect(events).toEqual([]);
  });
});
