import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Journal } from '../../src/journal/journal.js';
import { ITEM_MODES, ITEM_STATES, isDurableMove } from '../../src/journal/states.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  sha256,
  UPLOAD_URL,
} from './support/journal-harness.js';

let h: JournalHarness;
let journal: Journal;

beforeEach(() => {
  h = journalHarness();
  journal = h.open();
});
afterEach(() => h.cleanup());

function creating(n: number): number {
  const { item } = journal.recordClaim(claimInput({ fileName: `f${n}.pdf`, sha256: sha256(`content ${n}`) }));
  journal.transition(item.id, 'validated');
  journal.transition(item.id, 'creating');
  return item.id;
}

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

describe('commitMove (group commit)', () => {
  it('moves many items at once; each resolves with its new state, and all survive a reopen', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => creating(i));
    const moved = await Promise.all(
      ids.map((id, i) =>
        journal.commitMove(id, 'created', {
          jobId: `job-${i}`,
          uploadUrl: UPLOAD_URL,
          uploadDeadline: h.clock.now() + 7_200_000,
        }),
      ),
    );
    expect(moved.map((m) => m.state)).toEqual(ids.map(() => 'created'));
    journal.close();
    const reopened = h.open();
    expect(ids.map((id) => reopened.get(id)?.jobId)).toEqual(ids.map((_, i) => `job-${i}`));
  });

  it('refuses an illegal move as transition does and leaves the item as it was', async () => {
    const id = creating(1);
    await expect(journal.commitMove(id, 'uploaded', { md5: 'x' })).rejects.toMatchObject({
      code: 'DOCEX_JOURNAL_TRANSITION',
    });
    expect(journal.get(id)?.state).toBe('creating');
  });

  it('flush resolves when nothing waits for the disk, and after a NORMAL commit', async () => {
    await journal.flush();
    const id = creating(2);
    await journal.flush();
    expect(journal.get(id)?.state).toBe('creating');
  });
});
