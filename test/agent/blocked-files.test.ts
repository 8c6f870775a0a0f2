import { afterEach, describe, expect, it } from 'vitest';
import { BlockedFiles } from '../../src/agent/blocked-files.js';
import { captureLogger } from '../api/support/log-capture.js';
import {
  claimInput,
  type JournalHarness,
  journalHarness,
  sha256,
} from '../journal/support/journal-harness.js';

let h: JournalHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('blocked files', () => {
  it('logs one error per file still unfinished an hour after its claim, and none for a finished one', async () => {
    h = journalHarness();
    const journal = await h.open();
    const stuck = await journal.recordClaim(claimInput({ fileName: 'stuck.pdf', sha256: sha256('stuck') }));
    const refused = await journal.recordClaim(claimInput({ fileName: 'bad.pdf', sha256: sha256('bad') }));
    if (stuck.kind !== 'claimed' || refused.kind !== 'claimed') throw new Error('expected two claims');
    await journal.transition(refused.item.id, 'rejected', {
      code: 'DOCEX_INPUT_EMPTY',
      reason: 'empty',
    });
    const { log, lines } = captureLogger('info');
    const blocked = new BlockedFiles({
      journal: { kind: 'sqlite', file: h.file },
      clock: h.clock,
      log,
      blockedAfterMs: 3_600_000,
    });

    h.clock.advance(3_599_000);
    expect(await blocked.check()).toBe(0);
    h.clock.advance(1_000);
    expect(await blocked.check()).toBe(1);
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'DOCEX_FILE_BLOCKED',
        file: 'stuck.pdf',
        state: 'claimed',
        waitingForMs: 3_600_000,
      }),
    ]);
    // Once per file.
    h.clock.advance(600_000);
    expect(await blocked.check()).toBe(0);
    expect(lines()).toHaveLength(1);
  });
});
