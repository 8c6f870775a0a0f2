/**
 * Opens the journal, or its read API, wherever the configuration says it is. The only place that
 * names a backend: everything else holds a JournalStore or a JournalReader.
 */
import type { JournalLocation } from './location.js';
import { PostgresJournal } from './postgres/journal.js';
import { PostgresJournalReader } from './postgres/reader.js';
import { SqliteJournal } from './sqlite-journal.js';
import { SqliteJournalReader } from './sqlite-reader.js';
import type { JournalReader, JournalStore } from './store.js';
import type { JournalOptions } from './types.js';

export async function openJournal(location: JournalLocation, options: JournalOptions): Promise<JournalStore> {
  if (location.kind === 'sqlite') return SqliteJournal.open(location.file, options);
  return PostgresJournal.open(location.connection, options);
}

/**
 * A reader beside the writing agent: never migrates or writes. A SQLite journal must exist (a
 * reader never creates one); `busyTimeoutMs`: how long a SQLite reader waits for a writer's lock.
 */
export async function openJournalReader(
  location: JournalLocation,
  options: { busyTimeoutMs: number },
): Promise<JournalReader> {
  if (location.kind === 'sqlite') return SqliteJournalReader.open(location.file, options);
  return PostgresJournalReader.open(location.connection);
}
