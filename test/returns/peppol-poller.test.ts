import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocexClient } from '../../src/api/index.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { readUblSummary } from '../../src/domain/ubl.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import type { OutputContent, OutputTarget } from '../../src/outputs/types.js';
import { PeppolPoller, type PeppolSource, type PeppolSummaryFile } from '../../src/returns/peppol-poller.js';
import { SqliteInboxStore } from '../../src/returns/sqlite-inbox-store.js';
import { addPeppolDocument } from '../../src/sandbox/peppol-documents.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { requestSent } from '../support/request-sent.js';

const SEED_DIR = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/', import.meta.url));
const SEEDED = readdirSync(SEED_DIR).filter((f) => f.endsWith('.xml'));
const OVERLAP_MS = 15 * 60_000;

let t: TestSandbox;
let client: DocexClient;
let dir: string;
let inbox: string;

beforeEach(async () => {
  t = await startTestSandbox();
  client = new DocexClient(sandboxClientOptions(t.sandbox));
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-peppol-'));
  inbox = path.join(dir, 'inbox');
});

afterEach(async () => {
  await client.close();
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

function openPoller(options: { target?: OutputTarget; peppol?: PeppolSource } = {}) {
  const store = SqliteInboxStore.open(path.join(dir, 'state', 'inbox.sqlite'), systemClock);
  const poller = new PeppolPoller({
    peppol: options.peppol ?? client.peppol,
    store,
    target: options.target ?? new LocalTarget(inbox),
    tmpDir: path.join(dir, 'state', 'inbox-tmp'),
    clock: systemClock,
    log: silentLogger(),
    overlapMs: OVERLAP_MS,
    pageSize: 4,
  });
  return { store, poller };
}

function inboxFiles(): string[] {
  return readdirSync(inbox).sort();
}

function summaries(): PeppolSummaryFile[] {
  return inboxFiles()
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(inbox, f), 'utf8')) as PeppolSummaryFile);
}

/** A target that counts writes per name and can fail one write, as a crash would cut it. */
class CountingTarget implements OutputTarget {
  readonly description = 'counting';
  readonly writes = new Map<string, number>();
  failAfterWrite: ((relPath: string, n: number) => boolean) | undefined;
  private n = 0;
  constructor(private readonly inner: OutputTarget) {}
  async write(relPath: string, content: OutputContent): Promise<void> {
    await this.inner.write(relPath, content);
    this.writes.set(relPath, (this.writes.get(relPath) ?? 0) + 1);
    this.n++;
    if (this.failAfterWrite?.(relPath, this.n)) throw new Error('crash after the write');
  }
  exists(relPath: string) {
    return this.inner.exists(relPath);
  }
  async close() {}
}

describe('Peppol inbox poller against the sandbox', () => {
  it('saves every seeded invoice and credit note once as <senderId>_<number>_<id>.xml with a .json summary', async () => {
    const { store, poller } = openPoller();
    const first = await poller.poll();
    expect(first).toMatchObject({ saved: SEEDED.length, listed: SEEDED.length, gone: 0 });
    expect(first.error).toBeUndefined();
    expect(inboxFiles()).toHaveLength(SEEDED.length * 2);

    // Several examples share a document number: match each seed file by its saved content.
    const byContent = new Map(
      summaries().map((s) => [readFileSync(path.join(inbox, s.xmlFile), 'utf8'), s] as const),
    );
    for (const file of SEEDED) {
      const xml = readFileSync(path.join(SEED_DIR, file), 'utf8');
      const ubl = readUblSummary(xml);
      const summary = byContent.get(xml);
      expect(summary, file).toBeDefined();
      expect(summary).toMatchObject({
        documentType: ubl.documentType,
        issueDate: ubl.issueDate,
        sender: { id: ubl.senderId, name: ubl.senderName },
        receiver: { id: ubl.receiverId, name: ubl.receiverName },
        amount: ubl.amount,
        currency: ubl.currency,
      });
      // The name is built from the UBL, sanitised (':' of the participant id is not a file name character).
      expect(summary!.xmlFile).toBe(
        `${ubl.senderId.replace(/:/g, '-')}_${ubl.documentNumber.replace(/[^A-Za-z0-9._-]+/g, '-')}_${summary!.id}.xml`,
      );
    }
    expect(summaries().filter((s) => s.documentType === 'CreditNote')).toHaveLength(1);
    expect(summaries().filter((s) => s.documentType === 'Invoice')).toHaveLength(SEEDED.length - 1);

    // The overlap lists them again: all skipped, nothing rewritten.
    const second = await poller.poll();
    expect(second).toMatchObject({ saved: 0, skipped: SEEDED.length });
    expect(await store.savedCount()).toBe(SEEDED.length);
    await store.close();
  });

  it('finds a document recorded late inside the overlap, and one outside it is not listed again', async () => {
    const { store, poller } = openPoller();
    await poller.poll();
    const mark = (await store.highWaterMark())!;
    const newest = Math.max(...summaries().map((s) => Date.parse(s.receivedAt)));
    expect(mark).toBe(newest);

    const xml = readFileSync(path.join(SEED_DIR, 'base-example.xml'), 'utf8');
    const late = addPeppolDocument(t.sandbox.ctx, xml, SEED.partnerCompanyId, {
      receivedAt: mark - 5 * 60_000,
      emit: false,
    });
    const tooLate = addPeppolDocument(t.sandbox.ctx, xml, SEED.partnerCompanyId, {
      receivedAt: mark - OVERLAP_MS - 60_000,
      emit: false,
    });
    const fresh = addPeppolDocument(t.sandbox.ctx, xml, SEED.partnerCompanyId, { emit: false });

    const pass = await poller.poll();
    expect(pass.saved).toBe(2);
    const ids = new Set(summaries().map((s) => s.id));
    expect(ids.has(late.id)).toBe(true);
    expect(ids.has(fresh.id)).toBe(true);
    // The documented limit: the overlap must cover how late the service may record a document.
    expect(ids.has(tooLate.id)).toBe(false);
    expect(await store.highWaterMark()).toBe(Date.parse(fresh.createdAt));
    await store.close();
  });

  it('a crash between writing the files and recording them loses and doubles nothing after a restart', async () => {
    const counting = new CountingTarget(new LocalTarget(inbox));
    // The 6th write is the .json of the third document: written, then the process "dies".
    counting.failAfterWrite = (_p, n) => n === 6;
    const before = openPoller({ target: counting });
    const cut = await before.poller.poll();
    expect(cut.error).toBeInstanceOf(Error);
    expect(cut.saved).toBe(2);
    expect(await before.store.savedCount()).toBe(2);
    const markAfterCut = await before.store.highWaterMark();
    await before.store.close();

    counting.failAfterWrite = undefined;
    const after = openPoller({ target: counting });
    const resumed = await after.poller.poll();
    expect(resumed.error).toBeUndefined();
    expect(resumed.saved).toBe(SEEDED.length - 2);
    expect(await after.store.savedCount()).toBe(SEEDED.length);
    expect((await after.store.highWaterMark())!).toBeGreaterThan(markAfterCut!);

    // One XML and one summary per document, the cut one rewritten under the same names.
    const files = inboxFiles();
    expect(files).toHaveLength(SEEDED.length * 2);
    expect(new Set(summaries().map((s) => s.id)).size).toBe(SEEDED.length);
    const rewritten = [...counting.writes.entries()].filter(([, n]) => n > 1).map(([name]) => name);
    expect(rewritten).toHaveLength(2);
    expect(rewritten[0]!.replace(/\.(xml|json)$/, '')).toBe(rewritten[1]!.replace(/\.(xml|json)$/, ''));
    await after.store.close();
  });

  it('asks again for a download URL that expired before it was used', async () => {
    let urls = 0;
    let expiredOnce = false;
    const peppol: PeppolSource = {
      iterate: (q) => client.peppol.iterate(q),
      downloadFile: (url, target) => client.peppol.downloadFile(url, target),
      async downloadUrl(senderId, id) {
        urls++;
        const url = await client.peppol.downloadUrl(senderId, id);
        if (!expiredOnce) {
          expiredOnce = true;
          // Eleven minutes pass between the URL and its use: the files host refuses it (403).
          await t.sandbox.advanceClock(11 * 60_000);
        }
        return url;
      },
    };
    const { store, poller } = openPoller({ peppol });
    const pass = await poller.poll();
    expect(pass.error).toBeUndefined();
    expect(pass.saved).toBe(SEEDED.length);
    expect(urls).toBe(SEEDED.length + 1);
    await store.close();
  });

  it('with a 20% fault rate on every Peppol route, every document ends saved exactly once', async () => {
    const xml = readFileSync(path.join(SEED_DIR, 'base-creditnote-correction.xml'), 'utf8');
    for (let i = 0; i < 20; i++)
      addPeppolDocument(t.sandbox.ctx, xml, SEED.partnerCompanyId, { emit: false });
    const total = SEEDED.length + 20;
    for (const route of [
      '/peppol-incoming-documents',
      '/peppol-incoming-documents/sender/:senderId/document/:id/download-url',
      '/download/peppol/:id',
    ]) {
      const answer = await t.control('POST', '/faults', { route, errorRate: 0.2, status: 503 });
      expect(answer.status).toBe(201);
    }
    const counting = new CountingTarget(new LocalTarget(inbox));
    const { store, poller } = openPoller({ target: counting });
    let passes = 0;
    while ((await store.savedCount()) < total && passes < 20) {
      await poller.poll();
      passes++;
    }
    expect(await store.savedCount()).toBe(total);
    expect(inboxFiles()).toHaveLength(total * 2);
    expect([...counting.writes.values()].every((n) => n === 1)).toBe(true);
    await store.close();
  });

  it('stop() cuts a download in flight instead of waiting for it, and records nothing for it', async () => {
    const answer = await t.control('POST', '/faults', { route: '/download/peppol/:id', latencyMs: 60_000 });
    expect(answer.status).toBe(201);
    const { store, poller } = openPoller();
    const downloading = requestSent('/download/peppol/');
    const pass = poller.poll();
    // The first download is in flight, held by the injected latency (a stop before it would prove nothing).
    await downloading;
    await poller.stop();
    expect((await pass).saved).toBe(0);
    expect(await store.savedCount()).toBe(0);
    expect(await poller.poll()).toMatchObject({ listed: 0 });
    await store.close();
  });
});
