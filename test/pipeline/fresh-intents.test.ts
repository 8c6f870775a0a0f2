/**
 * Intent freshness, explicit on the item: only the item the recording call answered may be sent
 * without a job-name lookup, and only once; an item read from the journal never may.
 */
import { describe, expect, it } from 'vitest';
import type { JournalItem } from '../../src/journal/index.js';
import { FreshIntents, isFreshIntent } from '../../src/pipeline/fresh-intents.js';

const creating = (id: number, attempt: number) => ({ id, attempt, state: 'creating' }) as JournalItem;

describe('FreshIntents', () => {
  it('marks the item of an intent just recorded fresh, and lets it be sent without a lookup once', () => {
    const intents = new FreshIntents();
    const item = intents.recorded(creating(1, 1));
    expect(isFreshIntent(item)).toBe(true);
    expect(intents.take(item)).toBe(true);
    expect(intents.take(item)).toBe(false);
  });

  it('never lets an item read from the journal skip the lookup, even while its intent is unsent, and spends that intent', () => {
    const intents = new FreshIntents();
    const fresh = intents.recorded(creating(1, 1));
    const reread = creating(1, 1);
    expect(isFreshIntent(reread)).toBe(false);
    expect(intents.take(reread)).toBe(false);
    expect(intents.take(fresh)).toBe(false);
  });

  it('needs the same attempt: a fresh item of an earlier attempt is not the intent now recorded', () => {
    const intents = new FreshIntents();
    const first = intents.recorded(creating(1, 1));
    expect(intents.take(first)).toBe(true);
    const second = intents.recorded(creating(1, 2));
    expect(intents.take(first)).toBe(false);
    expect(intents.take(second)).toBe(true);
  });

  it('knows nothing of another process’s intents, and forgets an item’s intents when it leaves', () => {
    const before = new FreshIntents();
    const item = before.recorded(creating(1, 1));
    const after = new FreshIntents();
    expect(after.take(item)).toBe(false);
    before.recorded(creating(2, 1));
    const kept = before.recorded(creating(3, 1));
    before.forget(1);
    before.forget(2);
    expect(before.take(item)).toBe(false);
    expect(before.take(kept)).toBe(true);
  });
});
