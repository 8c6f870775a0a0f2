/**
 * Which intents are fresh: recorded by this process moments ago and not yet acted on. Only a fresh
 * intent may be sent without asking the service first (send-gate.ts); after a crash or a lost
 * answer none is fresh, so the job-name lookup decides.
 */
import type { JournalItem } from '../journal/index.js';

/**
 * A `creating` item as answered by the call that recorded its intent, in this process, moments
 * ago: its create may go out without a job-name lookup, once (FreshIntents.take). Only
 * FreshIntents.recorded makes one; an item read from the journal never is one, so an item resumed
 * after a wait, a crash or a lost answer is always looked up first.
 */
export type FreshIntent = JournalItem & { readonly freshIntent: true };

export function isFreshIntent(item: JournalItem): item is FreshIntent {
  return (item as Partial<FreshIntent>).freshIntent === true;
}

/**
 * Intents recorded by this process and not yet sent, by item and attempt; and of those sent, the
 * ones whose create got no answer, with when they were sent.
 */
export class FreshIntents {
  private readonly unsent = new Set<string>();
  private readonly unanswered = new Map<string, number>();

  /** The journal recorded this `creating` move moments ago, in this process: the item, marked fresh. */
  recorded(item: JournalItem): FreshIntent {
    this.unsent.add(keyOf(item));
    return { ...item, freshIntent: true };
  }

  /** True once per fresh intent: the caller may send without a lookup. Spends the intent either way. */
  take(item: JournalItem): boolean {
    const unsent = this.unsent.delete(keyOf(item));
    return unsent && isFreshIntent(item);
  }

  /** The create of this intent, sent at `sentAt`, got no answer: the service may still act on it. */
  sentUnanswered(item: JournalItem, sentAt: number): void {
    this.unanswered.set(keyOf(item), sentAt);
  }

  /** When this process last sent this intent's create and got no answer; undefined when it did not. */
  unansweredSince(item: JournalItem): number | undefined {
    return this.unanswered.get(keyOf(item));
  }

  /** Forgets an item's intents (it left the pipeline). */
  forget(itemId: number): void {
    for (const key of this.unsent) if (key.startsWith(`${itemId}:`)) this.unsent.delete(key);
    for (const key of this.unanswered.keys()) if (key.startsWith(`${itemId}:`)) this.unanswered.delete(key);
  }
}

function keyOf(item: JournalItem): string {
  return `${item.id}:${item.attempt}`;
}
