/**
 * Opens the return path's stores, or its read API, where the journal is: SQLite files in the
 * state folder beside journal.sqlite (returns.sqlite, inbox.sqlite), or the journal's PostgreSQL
 * database (tables of their own, migrations of their own). The only place that names a backend:
 * everything else holds a ReturnsStore, an InboxStore or a ReturnsReader. The PostgreSQL
 * implementations are imported only when the journal is there, so a SQLite agent never loads pg.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JournalLocation } from '../journal/index.js';
import { INBOX_FILE, type InboxStore } from './inbox-store.js';
import { SqliteInboxStore } from './sqlite-inbox-store.js';
import { SqliteReturnsStore } from './sqlite-store.js';
import { SqliteReturnsReader } from './sqlite-store-reader.js';
import { RETURNS_FILE, type ReturnsStore } from './store.js';
import type { FollowedJob, ReturnsReader } from './store-reader.js';

export interface StoreOpenOptions {
  /** Told when an idle PostgreSQL connection drops (the next statement connects anew). */
  log?: Logger;
}

const postgres = () => import('./postgres/index.js');

/** The returns store, created (or migrated) when needed. */
export async function openReturnsStore(
  location: JournalLocation,
  stateDir: string,
  clock: Clock,
  options: StoreOpenOptions = {},
): Promise<ReturnsStore> {
  if (location.kind === 'sqlite')
    return SqliteReturnsStore.open(path.join(stateDir, RETURNS_FILE), clock.now());
  return (await postgres()).PostgresReturnsStore.open(location.connection, clock.now(), options.log);
}

/**
 * The returns store when the agent has ever created it (commands beside the agent: `report`,
 * `returns retry`, `resend`), undefined when it has not: a command never creates it.
 */
export async function openExistingReturnsStore(
  location: JournalLocation,
  stateDir: string,
  clock: Clock,
): Promise<ReturnsStore | undefined> {
  if (location.kind === 'sqlite') {
    const file = path.join(stateDir, RETURNS_FILE);
    return existsSync(file) ? SqliteReturnsStore.open(file, clock.now()) : undefined;
  }
  return (await postgres()).PostgresReturnsStore.openExisting(location.connection, clock.now());
}

/** The inbox store (Peppol documents saved, the poll's mark, webhook ids seen). */
export async function openInboxStore(
  location: JournalLocation,
  stateDir: string,
  clock: Clock,
  options: StoreOpenOptions = {},
): Promise<InboxStore> {
  if (location.kind === 'sqlite') return SqliteInboxStore.open(path.join(stateDir, INBOX_FILE), clock);
  return (await postgres()).PostgresInboxStore.open(location.connection, clock, options.log);
}

/**
 * The returns store's read API, opened at its first read (nothing is connected or opened here).
 * `busyTimeoutMs`: how long a SQLite reader waits for the writer's lock.
 */
export function openReturnsReader(
  location: JournalLocation,
  stateDir: string,
  options: { busyTimeoutMs: number },
): ReturnsReader {
  if (location.kind === 'sqlite') {
    return new SqliteReturnsReader(path.join(stateDir, RETURNS_FILE), options.busyTimeoutMs);
  }
  const connection = location.connection;
  return new LazyReader(async () => (await postgres()).PostgresReturnsReader.open(connection));
}

/** A reader built at its first read; one whose build failed is built again at the next. */
class LazyReader implements ReturnsReader {
  private opening: Promise<ReturnsReader> | undefined;

  constructor(private readonly build: () => Promise<ReturnsReader>) {}

  private reader(): Promise<ReturnsReader> {
    this.opening ??= this.build().catch((err: unknown) => {
      this.opening = undefined;
      throw err;
    });
    return this.opening;
  }

  async proofsArchived(): Promise<number | undefined> {
    try {
      return await (await this.reader()).proofsArchived();
    } catch {
      return undefined;
    }
  }

  async followedJob(jobId: string): Promise<FollowedJob | undefined> {
    return (await this.reader()).followedJob(jobId);
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    await opening?.then((reader) => reader.close()).catch(() => undefined);
  }
}
