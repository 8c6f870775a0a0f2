/**
 * The order in which a folder hands its complete files over, pure: oldest first by modification
 * time (ties by name, so the order never depends on the listing) or by name alone, and at most
 * `maxFilesPerScan` per scan. Every candidate is listed and sorted before the cap is applied (as
 * Camel's `eagerMaxMessagesPerPoll=false`), so a backlog larger than the cap drains oldest first
 * across scans. Both kinds of source use it: the local stat loop and the SFTP poll.
 */
import type { ScanOrder } from '../config/index.js';

/** What a candidate is ordered by; an mtime not known (yet) sorts after every known one. */
export interface ScanKey {
  name: string;
  mtimeMs: number;
}

export interface ScanOrderRule {
  order: ScanOrder;
  /** Files handed over per scan at most; undefined: all of them. */
  maxFilesPerScan?: number | undefined;
}

/** By code point, as the file system spells the names (not the locale's collation). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when `a` goes first. */
export function compareScanKeys(order: ScanOrder, a: ScanKey, b: ScanKey): number {
  if (order === 'mtime') {
    const ta = Number.isNaN(a.mtimeMs) ? Number.POSITIVE_INFINITY : a.mtimeMs;
    const tb = Number.isNaN(b.mtimeMs) ? Number.POSITIVE_INFINITY : b.mtimeMs;
    if (ta !== tb) return ta < tb ? -1 : 1;
  }
  return byName(a.name, b.name);
}

/** The items in the folder's order, cut to `maxFilesPerScan`: the ones this scan hands over. */
export function pickForScan<T>(items: readonly T[], keyOf: (item: T) => ScanKey, rule: ScanOrderRule): T[] {
  const sorted = [...items].sort((a, b) => compareScanKeys(rule.order, keyOf(a), keyOf(b)));
  return rule.maxFilesPerScan === undefined ? sorted : sorted.slice(0, rule.maxFilesPerScan);
}

/**
 * The first `limit` keys, in order, of a listing streamed one entry at a time, held in at most
 * `limit` keys whatever the listing's size (a 100,000-entry folder is never one array): a heap
 * whose root is the last key kept, so a key after it is dropped as it is offered (garbage young,
 * never promoted) instead of waiting for a sort. A name offered twice counts once. A key may carry
 * more (what the listing saw of the file).
 */
export class FirstInOrder<K extends ScanKey = ScanKey> {
  /** A binary heap: each key goes after (or with) its children in the order. */
  private readonly heap: K[] = [];
  private readonly names = new Set<string>();
  private cut = false;

  constructor(
    private readonly order: ScanOrder,
    private readonly limit: number,
  ) {}

  offer(key: K): void {
    if (this.limit <= 0) {
      this.cut = true;
      return;
    }
    if (this.names.has(key.name)) return;
    if (this.heap.length < this.limit) {
      this.heap.push(key);
      this.names.add(key.name);
      this.siftUp(this.heap.length - 1);
      return;
    }
    this.cut = true;
    const last = this.heap[0] as K;
    if (this.goesAfter(key, last)) return;
    this.names.delete(last.name);
    this.names.add(key.name);
    this.heap[0] = key;
    this.siftDown(0);
  }

  /** Whether keys were left out (the rest of the listing waits for a later scan). */
  get leftOut(): boolean {
    return this.cut;
  }

  /** The kept keys, in order. */
  take(): K[] {
    return [...this.heap].sort((a, b) => compareScanKeys(this.order, a, b));
  }

  private goesAfter(a: K, b: K): boolean {
    return compareScanKeys(this.order, a, b) > 0;
  }

  private siftUp(at: number): void {
    const heap = this.heap;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.goesAfter(heap[at] as K, heap[parent] as K)) return;
      [heap[at], heap[parent]] = [heap[parent] as K, heap[at] as K];
      at = parent;
    }
  }

  private siftDown(at: number): void {
    const heap = this.heap;
    for (;;) {
      let latest = at;
      const left = 2 * at + 1;
      const right = left + 1;
      if (left < heap.length && this.goesAfter(heap[left] as K, heap[latest] as K)) latest = left;
      if (right < heap.length && this.goesAfter(heap[right] as K, heap[latest] as K)) latest = right;
      if (latest === at) return;
      [heap[at], heap[latest]] = [heap[latest] as K, heap[at] as K];
      at = latest;
    }
  }
}
