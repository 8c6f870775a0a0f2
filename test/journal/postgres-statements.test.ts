/**
 * The PostgreSQL journal's statement builders (pure): a file's move in one statement, synced or
 * not, and the claim lock's BEGIN, which writes the content hash into its text.
 */
import { describe, expect, it } from 'vitest';
import {
  beginWithClaimLock,
  oneStatementMove,
  STATEMENTS as S,
} from '../../src/journal/postgres/statements.js';

describe('a move in one statement', () => {
  it('commits unsynced only when asked (a done), under a name of its own so both stay prepared', () => {
    const synced = oneStatementMove(S.setState, 6);
    const unsynced = oneStatementMove(S.setState, 6, true);
    expect(synced.text).not.toContain('synchronous_commit');
    expect(unsynced.text).toContain("set_config('synchronous_commit', 'off', true)");
    expect(unsynced.name).not.toBe(synced.name);
    // Built once each.
    expect(oneStatementMove(S.setState, 6, true)).toBe(unsynced);
    expect(oneStatementMove(S.setState, 6)).toBe(synced);
  });
});

describe('the claim lock', () => {
  it('writes a hex content hash into its BEGIN and refuses anything else', () => {
    expect(beginWithClaimLock('ab12')).toContain("hashtext('ab12')");
    expect(() => beginWithClaimLock("x'); DROP TABLE items; --")).toThrow(/hex/);
  });
});
