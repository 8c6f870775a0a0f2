// TEMP STUB replaced by helper-2's implementation
import type { PostgresConnection } from '../location.js';
import type { JournalReader } from '../store.js';
export class PostgresJournalReader {
  static async open(_c: PostgresConnection): Promise<JournalReader> {
    throw new Error('stub');
  }
}
