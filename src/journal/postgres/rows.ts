/** pg's rows as the journal's values: the same JournalItem and HistoryEntry as SQLite's. */
import { opt, type SqlRow } from '../../core/sqlite-store.js';
import { type JournalItem, toItem } from '../schema.js';
import type { ItemState } from '../states.js';
import type { HistoryEntry } from '../types.js';

export type Row = Record<string, unknown>;

/** A row read with PG_ITEM_COLUMNS (BIGINTs already numbers, booleans as 0/1). */
export const itemOf = (row: Row): JournalItem => toItem(row as SqlRow);

/** A nullable column as an optional field. */
export const optional = <T>(value: unknown): T | undefined => opt<T>(value as SqlRow[string] | undefined);

/** A history row; its JSON detail comes back parsed (NULL: no detail). */
export function historyEntryOf(row: Row): HistoryEntry {
  return {
    itemId: row['item_id'] as number,
    from: optional<ItemState>(row['from_state']),
    to: row['to_state'] as ItemState,
    at: row['at'] as number,
    detail: optional<Record<string, unknown>>(row['detail']),
  };
}
