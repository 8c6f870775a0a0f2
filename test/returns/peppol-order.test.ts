/**
 * The high-water mark with a service that answers out of order: pure logic over a fake list
 * (fault injection), the files written for real.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { PeppolDocument } from '../../src/domain/wire.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import type { InboxStore } from '../../src/returns/inbox-store.js';
import { PeppolPoller, type PeppolSource } from '../../src/returns/peppol-poller.js';
import { SqliteInboxStore } from '../../src/returns/sqlite-inbox-store.js';

const XML = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/base-example.xml', import.meta.url));
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-peppol-order-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const doc = (id: string, minute: number): PeppolDocument => ({
  id,
  senderId: '0088:7300010000001',
  createdAt: new Date(Date.UTC(2026, 10, 21, 10, minute)).toISOString(),
});

/** Lists `docs` as given; the download of `failing` fails like a network error would. */
function source(docs: PeppolDocument[], failing: string): PeppolSource {
  return {
    iterate: () =>
      (async function* () {
        yield* docs;
      })(),
    downloadUrl: async (_sender: string, id: string) => ({ url: `https://files.invalid/${id}` }),
    downloadFile: async (url: string, target: string) => {
      if (url.endsWith(failing)) throw new Error('connection reset');
      copyFileSync(XML, target);
      return { size: 0, md5: '' };
    },
  } as unknown as PeppolSource;
}

function poller(peppol: PeppolSource, wrap: (store: InboxStore) => InboxStore = (s) => s) {
  const store = SqliteInboxStore.open(path.join(dir, 'inbox.sqlite'), new ManualClock(0));
  const p = new PeppolPoller({
    peppol,
    store: wrap(store),
    target: new LocalTarget(path.join(dir, 'out')),
    tmpDir: path.join(dir, 'tmp'),
    clock: new ManualClock(0),
    log: silentLogger(),
    overlapMs: 60_000,
  });
  return { store, p };
}

describe('Peppol high-water mark and list order', () => {
  it('after an early end in ascending order, the mark stands on the last document handled', async () => {
    const { store, p } = poller(source([doc('a', 1), doc('b', 2), doc('c', 3)], 'b'));
    const pass = await p.poll();
    expect(pass.saved).toBe(1);
    expect(pass.error).toBeInstanceOf(Error);
    expect(await store.highWaterMark()).toBe(Date.parse(doc('a', 1).createdAt));
    await store.close();
  });

  it('a list out of createdAt order that ends early leaves the mark where it was', async () => {
    const { store, p } = poller(source([doc('c', 3), doc('a', 1), doc('b', 2)], 'b'));
    const pass = await p.poll();
    expect(pass.saved).toBe(2);
    expect(await store.highWaterMark()).toBeUndefined();
    await store.close();
  });

  it('a complete pass moves the mark to the newest document whatever the order', async () => {
    const { store, p } = poller(source([doc('c', 3), doc('a', 1)], 'none'));
    expect((await p.poll()).saved).toBe(2);
    expect(await store.highWaterMark()).toBe(Date.parse(doc('c', 3).createdAt));
    await store.close();
  });

  it('a store that cannot answer ends the pass, never the process: no mark read, or the mark not recorded', async () => {
    const unreachable = () => Promise.reject(new Error('the database is unreachable'));
    const noMark = poller(source([doc('a', 1)], 'none'), (s) =>
      Object.assign(Object.create(s), { highWaterMark: unreachable }),
    );
    const skipped = await noMark.p.poll();
    expect(skipped).toMatchObject({ listed: 0, saved: 0 });
    expect(skipped.error).toBeInstanceOf(Error);
    await noMark.store.close();

    const noRecord = poller(source([doc('a', 1)], 'none'), (s) =>
      Object.assign(Object.create(s), { advanceHighWaterMark: unreachable }),
    );
    expect(await noRecord.p.poll()).toMatchObject({ listed: 1, saved: 1 });
    expect(await noRecord.store.highWaterMark()).toBeUndefined();
    await noRecord.store.close();
  });
});
