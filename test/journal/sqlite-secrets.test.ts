/**
 * SQLite only: a dropped upload URL must not stay in the journal's files on disk, in the WAL's old
 * frames (checkpointed with TRUNCATE: at once for a refusal or a recreate, within the scrub delay
 * after a confirmed upload, at close and at open) or in free pages (secure_delete). What every
 * backend must do with the URL is conformance/secrets.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SCRUB_DELAY_MS } from '../../src/journal/sqlite-journal.js';
import type { JournalStore } from '../../src/journal/store.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  UPLOAD_URL_SIGNATURE as SIGNATURE,
  UPLOAD_URL,
} from './support/journal-harness.js';

let h: JournalHarness;
let journal: JournalStore;

beforeEach(async () => {
  h = journalHarness();
  journal = await h.open();
});
afterEach(async () => {
  vi.useRealTimers();
  await h.cleanup();
});

async function createdItem(): Promise<number> {
  const { item } = await journal.recordClaim(claimInput());
  await journal.transition(item.id, 'validated');
  await journal.transition(item.id, 'creating');
  await journal.transition(item.id, 'created', {
    jobId: 'job-1',
    uploadUrl: UPLOAD_URL,
    uploadDeadline: h.clock.now() + 7_200_000,
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

describe('no copy of a dropped upload URL stays in the SQLite files', () => {
  it('is on disk while the job waits (a crash must not strand the upload)', async () => {
    await createdItem();
    expect(diskBytes()).toContain(SIGNATURE);
  });

  it('leaves the WAL within the scrub delay after a confirmed upload (one checkpoint per burst)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const id = await createdItem();
    await journal.transition(id, 'uploaded', { md5: 'abc' });
    vi.advanceTimersByTime(DEFAULT_SCRUB_DELAY_MS - 1);
    expect(diskBytes()).toContain(SIGNATURE);
    vi.advanceTimersByTime(1);
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('takes the scrub delay it is given; 0 checkpoints at once', async () => {
    const quick = journalHarness({ scrubDelayMs: 0 });
    try {
      const j = await quick.open();
      const { item } = await j.recordClaim(claimInput());
      await j.transition(item.id, 'validated');
      await j.transition(item.id, 'creating');
      await j.transition(item.id, 'created', { jobId: 'j', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 });
      const bytes = () =>
        readFileSync(quick.file).toString('latin1') + readFileSync(`${quick.file}-wal`).toString('latin1');
      expect(bytes()).toContain(SIGNATURE);
      await j.transition(item.id, 'uploaded', { md5: 'abc' });
      expect(bytes()).not.toContain(SIGNATURE);
    } finally {
      await quick.cleanup();
    }
  });

  it('leaves the WAL at close when the scrub delay has not passed yet', async () => {
    const id = await createdItem();
    await journal.transition(id, 'uploaded', { md5: 'abc' });
    expect(diskBytes()).toContain(SIGNATURE);
    await journal.close();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('leaves the WAL at open after a crash that came before the scrub', async () => {
    const id = await createdItem();
    await journal.transition(id, 'uploaded', { md5: 'abc' });
    expect(diskBytes()).toContain(SIGNATURE);
    // A second store on the same file stands for the restarted agent (the first never closes).
    await h.open();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('forgetUploadUrl NULLs it and no copy stays in the database or WAL file on disk', async () => {
    const id = await createdItem();
    expect(diskBytes()).toContain(SIGNATURE);
    await journal.forgetUploadUrl(id);
    expect(await journal.revealUploadUrl(id)).toBeUndefined();
    expect(diskBytes()).not.toContain(SIGNATURE);
    await journal.close();
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('a refusal drops it from disk at once', async () => {
    const id = await createdItem();
    await journal.transition(id, 'rejected', { code: 'DOCEX_SOURCE_CHANGED', reason: 'changed' });
    expect(diskBytes()).not.toContain(SIGNATURE);
  });

  it('a recreate drops it from disk at once', async () => {
    const id = await createdItem();
    await journal.transition(id, 'creating');
    expect(diskBytes()).not.toContain(SIGNATURE);
  });
});
