/**
 * SQLite only: the journal as a file (its mode, WAL mode, the schema versions recorded in it, a
 * file of a newer agent refused) and a reader that never makes a file. What every backend does is test/journal/conformance/.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { openJournal, openJournalReader } from '../../src/journal/open.js';
import { SCHEMA_VERSION } from '../../src/journal/schema.js';
import { type JournalHarness, journalHarness } from './support/journal-harness.js';
import { claimed, codeOf } from './support/steps.js';

let h: JournalHarness;

beforeEach(() => {
  h = journalHarness();
});
afterEach(() => h.cleanup());

describe('the SQLite journal file', () => {
  it('creates the journal and its WAL files with mode 0600, and tightens an existing looser file', async () => {
    const journal = await h.open();
    await claimed(journal);
    for (const f of [h.file, `${h.file}-wal`, `${h.file}-shm`]) expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(h.file)).mode & 0o777).toBe(0o700);
    const loose = path.join(h.dir, 'loose.db');
    writeFileSync(loose, '', { mode: 0o644 });
    chmodSync(loose, 0o644);
    await (await openJournal({ kind: 'sqlite', file: loose }, { clock: h.clock, log: h.log })).close();
    expect(statSync(loose).mode & 0o777).toBe(0o600);
  });

  it('keeps a versioned schema in WAL mode: migrations recorded once, a newer journal refused', async () => {
    await (await h.open()).close();
    await (await h.open()).close(); // opening again applies nothing twice
    const db = new Database(h.file);
    const versions = Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));
    expect(SCHEMA_VERSION).toBe(3);
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(versions);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      SCHEMA_VERSION + 1,
      0,
    );
    db.close();
    expect(await codeOf(h.open())).toBe('DOCEX_JOURNAL_VERSION');
  });

  it('logs where it opened, the schema version, what it migrated and how much is unfinished', async () => {
    const journal = await h.open();
    await claimed(journal);
    await journal.close();
    await h.open();
    const opened = h
      .logText()
      .split('\n')
      .filter((l) => l.includes('"journal opened"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(opened).toEqual([
      expect.objectContaining({ file: h.file, schemaVersion: 3, migrated: [1, 2, 3], unfinished: 0 }),
      expect.objectContaining({ file: h.file, schemaVersion: 3, migrated: [], unfinished: 1 }),
    ]);
    expect(journal.location).toBe(h.file);
  });

  it('a reader refuses a journal that does not exist rather than creating one', async () => {
    const missing = path.join(h.dir, 'no-journal.sqlite');
    await expect(
      openJournalReader({ kind: 'sqlite', file: missing }, { busyTimeoutMs: 1000 }),
    ).rejects.toThrow();
    expect(existsSync(missing)).toBe(false);
  });
});
