/**
 * SQLite only: which moves the journal commits with synchronous=FULL (on disk before the agent acts
 * on them). What every backend must do with commitMove/flush is conformance/commit.test.ts; a
 * real SIGKILL is sqlite-recovery.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ITEM_MODES, ITEM_STATES, isDurableMove } from '../../src/journal/states.js';

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
