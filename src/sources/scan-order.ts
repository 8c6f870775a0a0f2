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
 * twice `limit` keys whatever the listing's size (a 100,000-entry folder is never one array).
 * A name offered twice counts once. A key may carry more (what the listing saw of the file).
 */
export class FirstInOrder<K extends ScanKey = ScanKey> {
  private kept = new Map<string, K>();
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
    if (this.kept.has(key.name)) return;
    this.kept.set(key.name, key);
    if (this.kept.size >= 2 * this.limit) this.trim();
  }

  /** Whether keys were left out (the rest of the listing waits for a later scan). */
  get leftOut(): boolean {
    return this.cut;
  }

  /** The kept keys, in order. */
  take(): K[] {
    this.trim();
    return [...this.kept.values()];
  }

  private trim(): void {
    const sorted = [...this.kept.values()].sort((a, b) => compareScanKeys(this.order, a, b));
    if (sorted.length > this.limit) this.cut = true;
    this.kept = new Map(sorted.slice(0, this.limit).map((k) => [k.name, k]));
  }
}
