/**
 * Prunes a journal's finished items older than a cutoff, batch by batch (JournalStore.pruneFinished), with a
 * turn of the event loop between batches: a journal of millions of items never holds the intake
 * (which shares its connection) for longer than one batch.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { JournalStore } from './store.js';

/** Item ids one batch looks at: a bounded primary-key range, a few ms of work. */
export const PRUNE_SCAN_IDS = 2000;

export interface PruneTotals {
  items: number;
  rows: number;
  history: number;
  batches: number;
}

export async function pruneJournal(
  journal: Pick<JournalStore, 'pruneFinished'>,
  cutoffMs: number,
  options: { scanIds?: number; pause?: () => Promise<unknown> } = {},
): Promise<PruneTotals> {
  const totals: PruneTotals = { items: 0, rows: 0, history: 0, batches: 0 };
  const pause = options.pause ?? (() => nextTurn());
  for (let after: number | undefined = 0; after !== undefined; ) {
    const batch = await journal.pruneFinished(cutoffMs, after, options.scanIds ?? PRUNE_SCAN_IDS);
    totals.items += batch.items;
    totals.rows += batch.rows;
    totals.history += batch.history;
    totals.batches++;
    after = batch.next;
    if (after !== undefined) await pause();
  }
  return totals;
}
