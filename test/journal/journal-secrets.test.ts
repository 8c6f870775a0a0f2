import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SCRUB_DELAY_MS, type Journal } from '../../src/journal/journal.js';
import { stripUrlQueries } from '../../src/journal/redact.js';
import { claimInput, type JournalHarness, journalHarness, UPLOAD_URL } from './support/journal-harness.js';

const SIGNATURE = 'SIGNATURE-9f8e7d6c5b4a';

let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

function createdItem() {
  const { item } = journal.recordClaim(claimInput());
  journal.transition(item.id, 'validated');
  journal.transition(item.id, 'creating');
  journal.transition(item.id, 'created', {
    jobId: 'job-1',
    uploadUrl: UPLOAD_URL,
    uploadDeadline: h.clock.now() + 7_200_000,
    note: `created via ${UPLOAD_URL}`,
  });
  return item.id;
}

/** The database and its WAL as they are on disk. */
function diskBytes(): string {
  return [h.file, `${h.file}-wal`]
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');
}

describe('the upload URL is a credential', () => {
  it('is kept for the uploader while the job waits, but is not in the item, its JSON, the history or the logs', () => {
    const id = createdItem();
    expect(journal.revealUploadUrl(id)).toBe(UPLOAD_URL);
    const item = journal.get(id)!;
    expect(item.hasUploadUrl).toBe(true);
    expect(JSON.stringify(item)).not.toContain(SIGNATURE);
    expect(JSON.stringify(journal.history(id))).not.toContain(SIGNATURE);
    expect(JSON.stringify(journal.recoveryPlan())).not.toContain(SIGNATURE);
    expect(JSON.stringify(journal.history(id).at(-1)?.detail)).toContain('?[redacted]');
    expect(h.logText()).toContain('journal transition');
    expect(h.logText()).not.toContain(SIGNATURE);
  });

  it('survives a reopen while the job waits (a crash must not strand the upload)', () => {
    const id = createdItem();
    journal.close();
    expect(h.open().revealUploadUrl(id)).toBe(UPLOAD_URL);
  });

  it('leaves the row when the upload is confirmed', () => {
    const id = createdItem();
    const uploaded = journal.transition(id, 'uploaded', { md5: 'abc' });
    expect(uploaded.hasUploadUrl).toBe(false);
    expect(journal.revealUploadUrl(id)).toBeUndefined();
  });

  it('leaves the WAL within the scrub delay after a confirmed upload (one checkpoint per burst)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const id = createdItem();
      journal.transition(id, 'uploaded', { md5: 'abc' });
      vi.advanceTimersByTime(DEFAULT_SCRUB_DELAY_MS - 1);
      expect(diskBytes()).toContain(SIGNATURE);
      vi.advanceTimersByTime(1);
      expect(diskBytes()).not.toContain(SIGNATURE);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves the WAL at close when the scrub delay has not passed yet', () => {
    const id = createdItem();
    journal.transition(id, 'uploaded', { md5: 'abc' });
    journal.close();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('leaves the WAL at open after a crash that came before the scrub', () => {
    const id = createdItem();
    journal.transition(id, 'uploaded', { md5: 'abc' });
    expect(diskBytes()).toContain(SIGNATURE);
    // A second journal on the same file stands for the restarted agent (the first never closes).
    h.open();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('forgetUploadUrl NULLs it and no copy stays in the database or WAL file on disk', () => {
    const id = createdItem();
    expect(diskBytes()).toContain(SIGNATURE);
    journal.forgetUploadUrl(id);
    expect(journal.revealUploadUrl(id)).toBeUndefined();
    expect(journal.get(id)?.hasUploadUrl).toBe(false);
    expect(diskBytes()).not.toContain(SIGNATURE);
    journal.close();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('is dropped when the item is rejected, and a reason quoting it loses the query', () => {
    const id = createdItem();
    const rejected = journal.transition(id, 'rejected', {
      code: 'DOCEX_FILE_CHANGED',
      reason: `the file changed before PUT ${UPLOAD_URL} finished`,
    });
    expect(rejected.rejectReason).toBe(
      'the file changed before PUT https://127.0.0.1:8443/upload/job-1?[redacted] finished',
    );
    expect(journal.revealUploadUrl(id)).toBeUndefined();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('is dropped by a recreate', () => {
    const id = createdItem();
    journal.transition(id, 'creating');
    expect(journal.revealUploadUrl(id)).toBeUndefined();
  });
});

describe('stripUrlQueries', () => {
  it('removes query and fragment of every URL, keeps the rest of the text', () => {
    expect(stripUrlQueries('a https://h/p?x=1&y=2 b http://q/r#frag c https://plain/path')).toBe(
      'a https://h/p?[redacted] b http://q/r?[redacted] c https://plain/path',
    );
  });
});
