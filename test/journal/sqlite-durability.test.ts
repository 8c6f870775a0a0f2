/**
 * SQLite only: how the journal makes moves durable. Which moves commit with synchronous=FULL (on
 * disk before the agent acts on them) and which with NORMAL, and group commit: commitMove and flush
 * share fsyncs of the WAL. What every backend must do with commitMove/flush is
 * conformance/commit.test.ts; a real SIGKILL is sqlite-recovery.test.ts.
 */
import { open } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { ITEM_MODES, ITEM_STATES, isDurableMove } from '../../src/journal/states.js';
import type { JournalStore } from '../../src/journal/store.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  sha256,
  UPLOAD_URL,
} from './support/journal-harness.js';

describe('which moves are on disk before the agent acts on them', () => {
  it('an upload job: the job id and URL before the PUT, the upload before the archive, any refusal', () => {
    const durable = ITEM_STATES.filter((to) => isDurableMove(to, 'single-file'));
    expect(durable).toEqual(['created', 'uploaded', 'rejected']);
    expect(ITEM_STATES.filter((to) => isDurableMove(to, 'payload-pdf'))).toEqual(durable);
  });

  it('a payload-word job: also its create intent, since its POST is the submission', () => {
    expect(isDurableMove('creating', 'payload-word')).toBe(true);
    for (const mode of ITEM_MODES) {
      expect(isDurableMove('claimed', mode)).toBe(false);
      expect(isDurableMove('done', mode)).toBe(false);
    }
  });
});

let h: JournalHarness;
let journal: JournalStore;

beforeEach(async () => {
  h = journalHarness();
  journal = await h.open();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await h.cleanup();
});

async function creating(n: number, mode: 'single-file' | 'payload-word' = 'single-file'): Promise<number> {
  const { item } = await journal.recordClaim(
    claimInput({ fileName: `f${n}.pdf`, sha256: sha256(`content ${n}`), mode }),
  );
  await journal.transition(item.id, 'validated');
  await journal.transition(item.id, 'creating');
  return item.id;
}

describe('synchronous level of each commit', () => {
  /** The level the journal last set (it sets it before a transaction, only when it changes). */
  let level: string;
  const levelAfter = async (call: () => Promise<unknown>): Promise<string> => {
    await call();
    return level;
  };

  beforeEach(() => {
    level = 'FULL'; // what openDatabase left
    // The journal sets the level through statements it prepared once: every statement's run is watched.
    const scratch = new Database(':memory:');
    const statement = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as {
      run: (...args: unknown[]) => unknown;
    };
    scratch.close();
    const run = statement.run;
    vi.spyOn(statement, 'run').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
      const set = /^PRAGMA synchronous = (FULL|NORMAL)$/.exec(this.source);
      if (set) level = set[1]!;
      return run.apply(this, args);
    });
  });

  it('FULL for the moves the agent acts on next, NORMAL for the rest', async () => {
    const { item } = await journal.recordClaim(claimInput());
    expect(level).toBe('NORMAL');
    const id = item.id;
    expect(await levelAfter(() => journal.transition(id, 'validated'))).toBe('NORMAL');
    expect(await levelAfter(() => journal.transition(id, 'creating'))).toBe('NORMAL');
    const created = { jobId: 'job-1', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 };
    expect(await levelAfter(() => journal.transition(id, 'created', created))).toBe('FULL');
    expect(await levelAfter(() => journal.transition(id, 'uploaded', { md5: 'm' }))).toBe('FULL');
    expect(await levelAfter(() => journal.transition(id, 'done'))).toBe('NORMAL');
    const other = await creating(2);
    expect(await levelAfter(() => journal.transition(other, 'rejected', { code: 'DOCEX_REJECTED' }))).toBe(
      'FULL',
    );
    // A payload-word create is the submission itself: its intent is durable first.
    const { item: word } = await journal.recordClaim(
      claimInput({ fileName: 'w.docx', mode: 'payload-word' }),
    );
    await journal.transition(word.id, 'validated');
    expect(await levelAfter(() => journal.transition(word.id, 'creating'))).toBe('FULL');
  });

  it('FULL for a duplicate claim (it is moved to error/ next), NORMAL for a new one', async () => {
    expect(await levelAfter(() => journal.recordClaim(claimInput()))).toBe('NORMAL');
    expect(
      await levelAfter(() => journal.recordClaim(claimInput({ sourcePath: '/srv/erp/in/copy.pdf' }))),
    ).toBe('FULL');
    expect(
      await levelAfter(() =>
        journal.recordClaim(claimInput({ sourcePath: '/srv/erp/in/copy2.pdf', allowDuplicates: true })),
      ),
    ).toBe('NORMAL');
  });

  it('NORMAL for a failed try, an inspection and a prune: a power cut there only repeats work', async () => {
    const id = await creating(1);
    await journal.transition(id, 'rejected', { code: 'DOCEX_REJECTED' }); // FULL
    expect(await levelAfter(() => journal.recordFailedTry(id, { code: 'DOCEX_API_503', nextTryAt: 1 }))).toBe(
      'NORMAL',
    );
    await journal.transition(await creating(2), 'rejected', { code: 'DOCEX_REJECTED' });
    expect(await levelAfter(() => journal.inspectionStarting('/p.pdf'))).toBe('NORMAL');
    await journal.transition(await creating(3), 'rejected', { code: 'DOCEX_REJECTED' });
    expect(await levelAfter(() => journal.pruneFinished(h.clock.now() + 1, 0, 100))).toBe('NORMAL');
  });

  it('commitMove commits with NORMAL and leaves durability to the shared fsync', async () => {
    const id = await creating(1);
    expect(
      await levelAfter(() =>
        journal.commitMove(id, 'created', { jobId: 'j', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 }),
      ),
    ).toBe('NORMAL');
  });
});

describe('group commit', () => {
  let syncs: MockInstance;

  beforeEach(async () => {
    // FileHandle's prototype, from a handle of our own: every fsync the journal runs goes through it.
    const handle = await open(h.file, 'r');
    const proto = Object.getPrototypeOf(handle) as { sync(): Promise<void> };
    await handle.close();
    syncs = vi.spyOn(proto, 'sync');
  });

  it('a burst of 20 commitMoves shares a few fsyncs instead of one each', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push(await creating(i));
    syncs.mockClear();
    const moved = await Promise.all(
      ids.map((id, i) =>
        journal.commitMove(id, 'created', { jobId: `job-${i}`, uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 }),
      ),
    );
    expect(moved.every((m) => m.state === 'created')).toBe(true);
    // The WAL at most twice (the first move's, then everyone's who came while it ran), and the
    // folder once when the WAL is first synced.
    expect(syncs.mock.calls.length).toBeGreaterThan(0);
    expect(syncs.mock.calls.length).toBeLessThanOrEqual(3);
  });

  it('flush after a NORMAL commit syncs the WAL; after a FULL commit it has nothing to do', async () => {
    const id = await creating(1); // NORMAL commits
    syncs.mockClear();
    await journal.flush();
    expect(syncs).toHaveBeenCalled();
    await journal.transition(id, 'created', { jobId: 'j', uploadUrl: UPLOAD_URL, uploadDeadline: 1e15 }); // FULL
    syncs.mockClear();
    await journal.flush();
    expect(syncs).not.toHaveBeenCalled();
    await journal.flush();
    expect(syncs).not.toHaveBeenCalled();
  });
});
