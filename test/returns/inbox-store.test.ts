import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { Database } from '../../src/core/sqlite.js';
import { SqliteInboxStore } from '../../src/returns/sqlite-inbox-store.js';
import { caughtDocex } from '../api/support/caught.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-inbox-store-'));
  file = path.join(dir, 'state', 'inbox.sqlite');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('inbox store', () => {
  it('creates its file with mode 0600 and keeps saved ids and the mark across a reopen', async () => {
    const clock = new ManualClock(1_000_000);
    const store = SqliteInboxStore.open(file, clock);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await store.markSaved({ id: 'ppl_1', createdAt: 500, stem: 'a_b_ppl_1' });
    await store.advanceHighWaterMark(500, 100);
    await store.close();
    const again = SqliteInboxStore.open(file, clock);
    expect(await again.isSaved('ppl_1')).toBe(true);
    expect(await again.isSaved('ppl_2')).toBe(false);
    expect(await again.highWaterMark()).toBe(500);
    await again.close();
  });

  it('moves the high-water mark forward only, forgetting ids far enough behind it', async () => {
    const store = SqliteInboxStore.open(file, new ManualClock(0));
    await store.markSaved({ id: 'old', createdAt: 100, stem: 'x' });
    await store.markSaved({ id: 'recent', createdAt: 950, stem: 'y' });
    await store.advanceHighWaterMark(1000, 200);
    expect(await store.highWaterMark()).toBe(1000);
    await store.advanceHighWaterMark(900, 200);
    expect(await store.highWaterMark()).toBe(1000);
    expect(await store.isSaved('old')).toBe(false);
    expect(await store.isSaved('recent')).toBe(true);
    await store.close();
  });

  it('remembers a webhook id: the first sighting is new, a repeat is not, also after a reopen', async () => {
    const clock = new ManualClock(0);
    const store = SqliteInboxStore.open(file, clock);
    expect(await store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(true);
    expect(await store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(false);
    await store.close();
    const again = SqliteInboxStore.open(file, clock);
    expect(await again.rememberWebhook('msg_1', undefined, 60_000)).toBe(false);
    expect(await again.rememberWebhook('msg_2', undefined, 60_000)).toBe(true);
    await again.close();
  });

  it('refuses a file written by a newer agent with DOCEX_INBOX_VERSION', async () => {
    await SqliteInboxStore.open(file, new ManualClock(0)).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    const err = await caughtDocex((async () => SqliteInboxStore.open(file, new ManualClock(0)))());
    expect(err).toMatchObject({ code: 'DOCEX_INBOX_VERSION' });
  });
});
