// TEMP STUB replaced by helper-2's implementation
import type { PostgresConnection } from '../location.js';
import type { JournalStore } from '../store.js';
import type { JournalOptions } from '../types.js';
export class PostgresJournal {
  static async open(_c: PostgresConnection, _o: JournalOptions): Promise<JournalStore> {
    throw new Error('stub');
  }
}
