/**
 * Which intents are fresh: recorded by this process moments ago and not yet acted on. Only a fresh
 * intent may be sent without asking the service first (send-gate.ts); after a crash or a lost
 * answer none is fresh, so the job-name lookup decides.
 */
import type { JournalItem } from '../journal/index.js';

/** Intents recorded by this process and not yet acted on, by item and attempt. */
export class FreshIntents {
  private readonly keys = new Set<string>();

  /** The journal recorded this `creating` move moments ago, in this process. */
  recorded(item: JournalItem): void {
    this.keys.add(keyOf(item));
  }

  /** True once per intent: the caller may send without a lookup. */
  take(item: JournalItem): boolean {
    return this.keys.delete(keyOf(item));
  }

  /** Forgets an item's intents (it left the pipeline). */
  forget(itemId: number): void {
    for (const key of this.keys) if (key.startsWith(`${itemId}:`)) this.keys.delete(key);
  }
}

function keyOf(item: JournalItem): string {
  return `${item.id}:${item.attempt}`;
}
