/**
 * Opens the journal, or its read API, wherever the configuration says it is. The only place that
 * names a backend: everything else holds a JournalStore or a JournalReader. The PostgreSQL one is
 * loaded only when asked for, so an agent on SQLite never loads its driver.
 */
import type { JournalLocation } from './location.js';
import { SqliteJournal } from './sqlite-journal.js';
import { SqliteJournalReader } from './sqlite-reader.js';
import type { JournalReader, JournalStore } from './store.js';
import type { JournalOptions } from './types.js';

export async function openJournal(location: JournalLocation, options: JournalOptions): Promise<JournalStore> {
  if (location.kind === 'sqlite') return SqliteJournal.open(location.file, options);
  const { PostgresJournal } = await import('./postgres/index.js');
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
  const { PostgresJournalReader } = await import('./postgres/index.js');
  return PostgresJournalReader.open(location.connection);
}
