import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { Database } from '../../src/core/sqlite.js';
import { InboxStore } from '../../src/returns/inbox-store.js';
import { caughtDocex } from '../api/support/caught.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-inbox-store-'));
  file = path.join(dir, 'state', 'inbox.sqlite');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('inbox store', () => {
  it('creates its file with mode 0600 and keeps saved ids and the mark across a reopen', () => {
    const clock = new ManualClock(1_000_000);
    const store = InboxStore.open(file, clock);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    store.markSaved({ id: 'ppl_1', createdAt: 500, stem: 'a_b_ppl_1' });
    store.advanceHighWaterMark(500, 100);
    store.close();
    const again = InboxStore.open(file, clock);
    expect(again.isSaved('ppl_1')).toBe(true);
    expect(again.isSaved('ppl_2')).toBe(false);
    expect(again.highWaterMark()).toBe(500);
    again.close();
  });

  it('moves the high-water mark forward only, forgetting ids far enough behind it', () => {
    const store = InboxStore.open(file, new ManualClock(0));
    store.markSaved({ id: 'old', createdAt: 100, stem: 'x' });
    store.markSaved({ id: 'recent', createdAt: 950, stem: 'y' });
    store.advanceHighWaterMark(1000, 200);
    expect(store.highWaterMark()).toBe(1000);
    store.advanceHighWaterMark(900, 200);
    expect(store.highWaterMark()).toBe(1000);
    expect(store.isSaved('old')).toBe(false);
    expect(store.isSaved('recent')).toBe(true);
    store.close();
  });

  it('remembers a webhook id: the first sighting is new, a repeat is not, also after a reopen', () => {
    const clock = new ManualClock(0);
    const store = InboxStore.open(file, clock);
    expect(store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(true);
    expect(store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(false);
    store.close();
    const again = InboxStore.open(file, clock);
    expect(again.rememberWebhook('msg_1', undefined, 60_000)).toBe(false);
    expect(again.rememberWebhook('msg_2', undefined, 60_000)).toBe(true);
    again.close();
  });

  it('refuses a file written by a newer agent with DOCEX_INBOX_VERSION', async () => {
    InboxStore.open(file, new ManualClock(0)).close();
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)').run();
    db.close();
    const err = await caughtDocex((async () => InboxStore.open(file, new ManualClock(0)))());
    expect(err).toMatchObject({ code: 'DOCEX_INBOX_VERSION' });
  });
});
