/**
 * Opens the journal, or its read API, wherever the configuration says it is. The only place that
 * names a backend: everything else holds a JournalStore or a JournalReader. The PostgreSQL one is
 * loaded only when asked for, so an agent on SQLite never loads its driver.
 */
import type { Logger } from '../core/logger.js';
import {
  agentIdentity,
  type ClusterOptions,
  type ClusterReader,
  type ClusterStore,
  LocalCluster,
} from './cluster.js';
import { describeLocation, type JournalLocation } from './location.js';
import { SCHEMA_VERSION } from './schema.js';
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

/**
 * The agents' view of each other where the journal is: the PostgreSQL tables (heartbeats, task
 * claims), or, for a SQLite journal, this agent alone. Opened after the journal (which migrated
 * the tables); connects at its first statement.
 */
export async function openCluster(
  location: JournalLocation,
  options: ClusterOptions,
  log?: Logger,
): Promise<ClusterStore> {
  if (location.kind === 'sqlite') {
    return new LocalCluster(location.file, options.identity ?? agentIdentity(), SCHEMA_VERSION);
  }
  const { PostgresCluster } = await import('./postgres/index.js');
  return PostgresCluster.open(location.connection, options, log);
}

/** The agents' rows, read-only (`docex-agent agents`); a SQLite journal has none to share. */
export async function openClusterReader(
  location: JournalLocation,
  options: { deadAfterMs: number },
): Promise<ClusterReader> {
  if (location.kind === 'sqlite') {
    return {
      shared: false,
      location: describeLocation(location),
      agents: async () => [],
      close: async () => {},
    };
  }
  const { PostgresClusterReader } = await import('./postgres/index.js');
  return PostgresClusterReader.open(location.connection, options);
}
