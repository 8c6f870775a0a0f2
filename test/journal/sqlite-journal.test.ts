/**
 * SQLite only: the journal as a file (its mode, WAL mode, the schema versions recorded in it, a
 * file of a newer agent refused, the migration of a version-2 file) and a reader that never makes
 * a file. What every backend does is test/journal/conformance/.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { openJournal, openJournalReader } from '../../src/journal/open.js';
import { pruneJournal } from '../../src/journal/prune.js';
import { SCHEMA_VERSION } from '../../src/journal/schema.js';
import { READER_CACHE_KIB } from '../../src/journal/sqlite-reader.js';
import { PRUNE_CANDIDATES, UNFINISHED_ITEMS } from '../../src/journal/statements.js';
import type { JournalStore } from '../../src/journal/store.js';
import { claimInput, type JournalHarness, journalHarness, UPLOAD_URL } from './support/journal-harness.js';
import { claimed, codeOf, toDone } from './support/steps.js';
import { createV2Journal, insertV2History, insertV2Item } from './support/v2-journal.js';

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
    expect(SCHEMA_VERSION).toBe(5);
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(versions);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      SCHEMA_VERSION + 1,
      0,
    );
    db.close();
    expect(await codeOf(h.open())).toBe('DOCEX_JOURNAL_VERSION');
  });

  it('finds the unfinished items through the state index, not by reading a year of finished ones', async () => {
    await (await h.open()).close();
    const db = new Database(h.file, { readonly: true });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${UNFINISHED_ITEMS}`).all() as { detail: string }[]).map(
      (r) => r.detail,
    );
    db.close();
    expect(plan).toContain('SEARCH items USING INDEX items_state (state=?)');
    expect(plan.filter((d) => d.startsWith('SCAN items'))).toEqual([]);
  });

  it('passes over done files pruned before: a pass of a year-old journal looks only at what is left to prune', async () => {
    const journal = await h.open();
    const done = async (fileName: string) => {
      const { item } = await journal.recordClaim(claimInput({ fileName, sourcePath: `/in/${fileName}` }));
      return (await toDone(journal, item.id)).id;
    };
    const pruned = await done('a.pdf');
    h.clock.advance(1000);
    expect(await pruneJournal(journal, h.clock.now())).toMatchObject({ items: 1 });
    const notYet = await done('b.pdf');
    const refused = await journal.recordClaim(
      claimInput({
        fileName: 'c.pdf',
        sourcePath: '/in/c.pdf',
        refused: { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' },
      }),
    );
    h.clock.advance(1000);
    const db = new Database(h.file, { readonly: true });
    const candidates = db.prepare(PRUNE_CANDIDATES).all(0, 1000, h.clock.now()) as { id: number }[];
    db.close();
    expect(candidates.map((c) => c.id)).toEqual([notYet, refused.item.id]);
    expect((await journal.get(pruned))?.state).toBe('done');
    expect(await pruneJournal(journal, h.clock.now())).toMatchObject({ items: 2 });
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
      expect.objectContaining({ file: h.file, schemaVersion: 5, migrated: [1, 2, 3, 4, 5], unfinished: 0 }),
      expect.objectContaining({ file: h.file, schemaVersion: 5, migrated: [], unfinished: 1 }),
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

  it("a reader keeps SQLite's own 2 MB page cache: reading a year of history leaves no 16 MB behind", async () => {
    await (await h.open()).close();
    const reader = await openJournalReader({ kind: 'sqlite', file: h.file }, { busyTimeoutMs: 1000 });
    const { db } = reader as unknown as { db: Database };
    expect(db.pragma('cache_size', { simple: true })).toBe(-READER_CACHE_KIB);
    expect(READER_CACHE_KIB).toBe(2000);
    await reader.close();
  });

  it('a reader never migrates: an old file stays at its version whatever the reader makes of it', async () => {
    createV2Journal(h.file, h.clock.now()).close();
    // Its statements need the version-3 columns, so it may well refuse the file; it must not change it.
    const reader = await openJournalReader({ kind: 'sqlite', file: h.file }, { busyTimeoutMs: 1000 }).catch(
      () => undefined,
    );
    await reader?.get(1).catch(() => undefined);
    await reader?.close();
    const check = new Database(h.file, { readonly: true });
    expect(check.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: 2 });
    expect(
      check.prepare("SELECT count(*) AS n FROM pragma_table_info('items') WHERE name = 'failed_tries'").get(),
    ).toEqual({
      n: 0,
    });
    check.close();
  });
});

describe('migrating a version-2 journal', () => {
  const T = Date.parse('2026-11-01T08:00:00.000Z');
  const orphanNote = (jobId: string) => `orphan job ${jobId}: its create answer was lost`;

  it('keeps every item, history entry, upload URL and inspection, and counts the lost answers its history notes', async () => {
    const db = createV2Journal(h.file, T);
    // A file whose create answers were lost twice: each time a job found by name, a new attempt.
    const lost = insertV2Item(db, {
      fileName: 'lost.pdf',
      sourcePath: '/srv/erp/in/lost.pdf',
      claimedPath: '/srv/erp/in/.processing/lost.pdf',
      sha256: 'a'.repeat(64),
      state: 'creating',
      attempt: 3,
      jobName: 'lost.pdf.dx-aaaaaaaaaaaa-000000-a3',
      at: T,
    });
    insertV2History(db, lost, null, 'claimed', T, { size: 1234, sha256: 'a'.repeat(64) });
    insertV2History(db, lost, 'claimed', 'validated', T);
    insertV2History(db, lost, 'validated', 'creating', T, { attempt: 1, jobName: 'n1' });
    insertV2History(db, lost, 'creating', 'creating', T + 1, {
      note: orphanNote('job-a'),
      attempt: 2,
      jobName: 'n2',
    });
    insertV2History(db, lost, 'creating', 'creating', T + 2, {
      note: orphanNote('job-b'),
      attempt: 3,
      jobName: 'n3',
    });
    // A file whose recreates were for other reasons: nothing lost.
    const waiting = insertV2Item(db, {
      fileName: 'waiting.pdf',
      sourcePath: '/srv/erp/in/waiting.pdf',
      sha256: 'b'.repeat(64),
      state: 'created',
      attempt: 2,
      jobName: 'waiting.pdf.dx-bbbbbbbbbbbb-000000-a2',
      jobId: 'job-w',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: T + 7_200_000,
      at: T,
    });
    insertV2History(db, waiting, null, 'claimed', T);
    insertV2History(db, waiting, 'validated', 'creating', T, { attempt: 1, jobName: 'w1' });
    insertV2History(db, waiting, 'created', 'creating', T, {
      note: 'upload window over',
      attempt: 2,
      jobName: 'w2',
      previousJobId: 'job-old',
    });
    insertV2History(db, waiting, 'creating', 'created', T, { jobId: 'job-w' });
    // A done file, read by duplicate detection.
    const done = insertV2Item(db, {
      fileName: 'done.pdf',
      sourcePath: '/srv/erp/in/done.pdf',
      sha256: 'c'.repeat(64),
      state: 'done',
      attempt: 1,
      jobId: 'job-d',
      at: T,
    });
    insertV2History(db, done, 'uploaded', 'done', T, { jobId: 'job-d' });
    db.prepare('INSERT INTO inspections (path, started_at, interrupted) VALUES (?, ?, ?)').run(
      '/p.pdf',
      T,
      1,
    );
    db.close();

    h.clock.set(T + 60_000);
    const journal: JournalStore = await h.open();
    expect(h.logText()).toMatch(/"migrated":\[3,4,5\]/);

    expect(await journal.get(lost)).toMatchObject({
      fileName: 'lost.pdf',
      sourcePath: '/srv/erp/in/lost.pdf',
      // Recorded before the journal kept it: read from sourcePath (sources/kinds.ts relativePathOf).
      relativePath: undefined,
      claimedPath: '/srv/erp/in/.processing/lost.pdf',
      state: 'creating',
      attempt: 3,
      jobName: 'lost.pdf.dx-aaaaaaaaaaaa-000000-a3',
      createdAt: T,
      updatedAt: T,
      lostAnswers: 2,
      orphanJobs: 2,
      failedTries: 0,
      nextTryAt: undefined,
      lastFailureCode: undefined,
    });
    expect(await journal.get(waiting)).toMatchObject({
      state: 'created',
      jobId: 'job-w',
      hasUploadUrl: true,
      uploadDeadline: T + 7_200_000,
      lostAnswers: 0,
      orphanJobs: 0,
      failedTries: 0,
    });
    expect(await journal.revealUploadUrl(waiting)).toBe(UPLOAD_URL);
    expect(await journal.get(done)).toMatchObject({
      state: 'done',
      jobId: 'job-d',
      lostAnswers: 0,
      orphanJobs: 0,
    });
    expect((await journal.history(lost)).map((e) => [e.from, e.to, e.at, e.detail?.['note']])).toEqual([
      [undefined, 'claimed', T, undefined],
      ['claimed', 'validated', T, undefined],
      ['validated', 'creating', T, undefined],
      ['creating', 'creating', T + 1, orphanNote('job-a')],
      ['creating', 'creating', T + 2, orphanNote('job-b')],
    ]);
    expect(await journal.history(waiting)).toHaveLength(4);
    expect(await journal.interruptedInspections('/p.pdf')).toBe(2);

    // The migrated journal works on: its counts go on from the back-filled ones, its content is known.
    expect(await journal.transition(lost, 'creating', { lostAnswer: 'orphan' })).toMatchObject({
      attempt: 4,
      lostAnswers: 3,
      orphanJobs: 3,
    });
    expect(
      (await journal.recordFailedTry(waiting, { code: 'DOCEX_API_503', nextTryAt: T + 1 })).failedTries,
    ).toBe(1);
    const again = await journal.recordClaim({
      folder: 'invoices',
      sourcePath: '/srv/erp/in/again.pdf',
      claimedPath: '/srv/erp/in/.processing/again.pdf',
      fileName: 'again.pdf',
      size: 1,
      mtimeMs: 1,
      sha256: 'c'.repeat(64),
      workflowId: 'wf-pdf-email',
      mode: 'single-file',
    });
    expect(again.kind === 'duplicate' && again.earlier.id).toBe(done);
    expect(again.item.id).toBeGreaterThan(done);

    // Migrated once: reopening applies nothing and keeps the counts.
    await journal.close();
    const reopened = await h.open();
    expect(await reopened.get(lost)).toMatchObject({ lostAnswers: 3, orphanJobs: 3 });
    const db2 = new Database(h.file, { readonly: true });
    expect(db2.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
    ]);
    db2.close();
  });

  it('counts only history notes that start with "orphan job", on moves to creating', async () => {
    const db = createV2Journal(h.file, T);
    const id = insertV2Item(db, {
      fileName: 'x.pdf',
      sha256: 'd'.repeat(64),
      state: 'creating',
      attempt: 4,
      at: T,
    });
    insertV2History(db, id, 'creating', 'creating', T, {
      note: 'not an orphan job',
      attempt: 2,
      jobName: 'x2',
    });
    insertV2History(db, id, 'creating', 'creating', T, { attempt: 3, jobName: 'x3' });
    insertV2History(db, id, 'creating', 'creating', T, {
      note: orphanNote('job-x'),
      attempt: 4,
      jobName: 'x4',
    });
    const other = insertV2Item(db, {
      fileName: 'y.pdf',
      sha256: 'e'.repeat(64),
      state: 'creating',
      attempt: 1,
      at: T,
    });
    insertV2History(db, other, 'validated', 'creating', T, { attempt: 1, jobName: 'y1' });
    db.close();

    const journal = await h.open();
    expect(await journal.get(id)).toMatchObject({ lostAnswers: 1, orphanJobs: 1 });
    expect(await journal.get(other)).toMatchObject({ lostAnswers: 0, orphanJobs: 0 });
  });
});
