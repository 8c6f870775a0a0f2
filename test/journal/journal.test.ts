import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import { Database } from '../../src/core/sqlite.js';
import { parseJobName } from '../../src/journal/job-name.js';
import { Journal } from '../../src/journal/journal.js';
import { SCHEMA_VERSION } from '../../src/journal/schema.js';
import { claimInput, type JournalHarness, journalHarness, UPLOAD_URL } from './support/journal-harness.js';

let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

function claimed(overrides = {}) {
  const result = journal.recordClaim(claimInput(overrides));
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
  return result.item;
}

function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isDocexError(err) ? err.code : 'not a DocexError';
  }
  return undefined;
}

describe('Journal on a real SQLite file', () => {
  it('records the claim: size, mtime, SHA-256, paths, workflow, time from the injected clock', () => {
    const item = claimed();
    expect(item).toMatchObject({
      kind: 'file',
      state: 'claimed',
      folder: 'invoices',
      fileName: 'invoice-2026-0001.pdf',
      size: 1234,
      mtimeMs: 1_763_700_000_000,
      workflowId: 'wf-pdf-email',
      mode: 'single-file',
      attempt: 0,
      hasUploadUrl: false,
      createdAt: h.clock.now(),
    });
    expect(journal.history(item.id)).toEqual([
      {
        itemId: item.id,
        from: undefined,
        to: 'claimed',
        at: h.clock.now(),
        detail: { size: 1234, sha256: item.sha256 },
      },
    ]);
  });

  it('walks a single-file item to done, each move stamped by the clock, with a deterministic job name', () => {
    const item = claimed();
    journal.transition(item.id, 'validated');
    h.clock.advance(1000);
    const creating = journal.transition(item.id, 'creating');
    expect(creating.attempt).toBe(1);
    expect(parseJobName(creating.jobName!)).toMatchObject({ sha12: item.sha256.slice(0, 12), attempt: 1 });
    h.clock.advance(1000);
    const deadline = h.clock.now() + 2 * 3_600_000;
    journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: deadline,
    });
    journal.transition(item.id, 'uploaded', { md5: 'abc123' });
    const done = journal.transition(item.id, 'done');
    expect(done).toMatchObject({
      state: 'done',
      jobId: 'job-1',
      uploadDeadline: deadline,
      uploadedMd5: 'abc123',
    });
    expect(done.updatedAt).toBe(h.clock.now());
    expect(journal.history(item.id).map((e) => [e.from, e.to])).toEqual([
      [undefined, 'claimed'],
      ['claimed', 'validated'],
      ['validated', 'creating'],
      ['creating', 'created'],
      ['created', 'uploaded'],
      ['uploaded', 'done'],
    ]);
    expect(journal.byJobId('job-1')?.id).toBe(item.id);
    expect(journal.unfinished()).toEqual([]);
  });

  it('records a claim that passed its checks as validated with its intent, in one transaction', () => {
    const item = claimed({ validatedNote: 'pdf' });
    expect(item).toMatchObject({ state: 'creating', attempt: 1 });
    expect(parseJobName(item.jobName!)).toMatchObject({ sha12: item.sha256.slice(0, 12), attempt: 1 });
    expect(journal.history(item.id).map((e) => [e.from, e.to, e.at, e.detail?.['note']])).toEqual([
      [undefined, 'claimed', h.clock.now(), undefined],
      ['claimed', 'validated', h.clock.now(), 'pdf'],
      ['validated', 'creating', h.clock.now(), undefined],
    ]);
    // The same content again is still a duplicate, refused at its claim, never validated.
    const again = journal.recordClaim(claimInput({ sourcePath: '/drop/again.pdf', validatedNote: 'pdf' }));
    expect(again.kind).toBe('duplicate');
    expect(journal.history(again.item.id).map((e) => e.to)).toEqual(['rejected']);
  });

  it('refuses an illegal move with DOCEX_JOURNAL_TRANSITION and changes nothing', () => {
    const item = claimed();
    expect(thrownCode(() => journal.transition(item.id, 'uploaded', { md5: 'x' }))).toBe(
      'DOCEX_JOURNAL_TRANSITION',
    );
    expect(thrownCode(() => journal.transition(item.id, 'done'))).toBe('DOCEX_JOURNAL_TRANSITION');
    expect(journal.get(item.id)?.state).toBe('claimed');
    expect(journal.history(item.id)).toHaveLength(1);
    expect(thrownCode(() => journal.transition(9999, 'validated'))).toBe('DOCEX_JOURNAL_UNKNOWN_ITEM');
  });

  it('refuses a move without the fields it records (DOCEX_JOURNAL_FIELDS) and rolls back', () => {
    const item = claimed();
    journal.transition(item.id, 'validated');
    journal.transition(item.id, 'creating');
    expect(thrownCode(() => journal.transition(item.id, 'created', { jobId: 'job-1' }))).toBe(
      'DOCEX_JOURNAL_FIELDS',
    );
    expect(thrownCode(() => journal.transition(item.id, 'rejected'))).toBe('DOCEX_JOURNAL_FIELDS');
    expect(journal.get(item.id)?.state).toBe('creating');
    expect(journal.history(item.id)).toHaveLength(3);
  });

  it('a recreate records a new intent: the attempt counts up, the name changes, the old job id leaves', () => {
    const item = claimed();
    journal.transition(item.id, 'validated');
    const first = journal.transition(item.id, 'creating');
    journal.transition(item.id, 'created', {
      jobId: 'job-1',
      uploadUrl: UPLOAD_URL,
      uploadDeadline: h.clock.now(),
    });
    const again = journal.transition(item.id, 'creating', { note: 'upload window over' });
    expect(again).toMatchObject({
      attempt: 2,
      jobId: undefined,
      hasUploadUrl: false,
      uploadDeadline: undefined,
    });
    expect(again.jobName).not.toBe(first.jobName);
    expect(parseJobName(again.jobName!)?.attempt).toBe(2);
    expect(journal.history(item.id).at(-1)?.detail).toMatchObject({ previousJobId: 'job-1', attempt: 2 });
    expect(journal.byJobId('job-1')).toBeUndefined();
  });

  it('reopening keeps items, rows, history and stats', () => {
    const item = claimed({ fileName: 'batch.csv', mode: 'payload-word' });
    journal.transition(item.id, 'validated');
    const rows = journal.addRows(item.id, [{ rowIndex: 0, label: 'C-1' }, { rowIndex: 1 }]);
    journal.transition(rows[0]!.id, 'creating');
    const before = {
      item: journal.get(item.id),
      rows: journal.rowsOf(item.id),
      history: journal.history(rows[0]!.id),
      stats: journal.stats(),
    };
    journal.close();
    const reopened = h.open();
    expect({
      item: reopened.get(item.id),
      rows: reopened.rowsOf(item.id),
      history: reopened.history(rows[0]!.id),
      stats: reopened.stats(),
    }).toEqual(before);
    expect(before.stats).toMatchObject({
      files: { validated: 1 },
      rows: { creating: 1, validated: 1 },
      unfinished: 3,
    });
  });

  it('creates the journal and its WAL files with mode 0600, and tightens an existing looser file', () => {
    claimed();
    for (const f of [h.file, `${h.file}-wal`, `${h.file}-shm`]) expect(statSync(f).mode & 0o777).toBe(0o600);
    const loose = `${h.dir}/loose.db`;
    writeFileSync(loose, '', { mode: 0o644 });
    chmodSync(loose, 0o644);
    Journal.open(loose, { clock: h.clock, log: h.log }).close();
    expect(statSync(loose).mode & 0o777).toBe(0o600);
  });

  it('keeps a versioned schema: migrations recorded once, a newer journal refused', () => {
    journal.close();
    const db = new Database(h.file);
    const versions = Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 }));
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').all()).toEqual(versions);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      SCHEMA_VERSION + 1,
      0,
    );
    db.close();
    expect(thrownCode(() => h.open())).toBe('DOCEX_JOURNAL_VERSION');
  });

  it('looks items up by source or claimed path, newest first, and by job id', () => {
    const a = claimed();
    journal.transition(a.id, 'rejected', { code: 'DOCEX_TEST', reason: 'test' });
    const b = claimed();
    expect(journal.byPath(a.sourcePath!).map((i) => i.id)).toEqual([b.id, a.id]);
    expect(journal.byPath(a.claimedPath!).map((i) => i.id)).toEqual([b.id, a.id]);
    expect(journal.byPath('/nowhere')).toEqual([]);
    expect(journal.byJobId('nope')).toBeUndefined();
  });

  it('lists the most recently moved files first for status output', () => {
    const a = claimed();
    h.clock.advance(1000);
    const b = claimed({ fileName: 'b.pdf' });
    h.clock.advance(1000);
    journal.transition(a.id, 'validated');
    expect(journal.recent(10).map((i) => i.id)).toEqual([a.id, b.id]);
    expect(journal.recent(1)).toHaveLength(1);
  });
});
