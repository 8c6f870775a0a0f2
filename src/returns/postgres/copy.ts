/**
 * The return path's part of `docex-agent journal copy`: how returns.sqlite and inbox.sqlite go to
 * the returns_* and inbox_* tables of the journal's PostgreSQL database (schema.ts), as StoreCopy
 * entries of the journal's copy (journal/postgres/copy.ts, which runs them in its one transaction).
 *
 * - Each store's tables are created by its own PostgreSQL migrations (migrateWithin, in the copy's
 *   transaction), so they are what PostgresReturnsStore and PostgresInboxStore would have made.
 * - Every column of the SQLite tables is copied as it is: texts (JSON included) byte for byte into
 *   TEXT, times and counters into BIGINT or INTEGER as the PostgreSQL schema has them, `done` from
 *   0/1 into BOOLEAN. No table here has an identity column: the keys are the service's ids, the
 *   journal's item ids, days and names, all copied.
 * - The returns store's `journal-history-cursor` (meta) names a history id of the journal: the
 *   journal's ids are kept by the same copy, so the follower goes on from where it stood.
 * - A store whose file is absent (the agent never followed a job, never received) has nothing to
 *   copy; the target must not have it either, and the agent creates it at its first start.
 */
import {
  type CopyOptions,
  type CopyResult,
  columns,
  copyToPostgres,
  JOURNAL_COPY,
  occupiedBy,
  type StoreCopy,
  type TableCopy,
} from '../../journal/postgres/copy.js';
import { INBOX_SCHEMA_VERSION } from '../sqlite-inbox-store.js';
import { RETURNS_SCHEMA_VERSION } from '../store-schema.js';
import { type Component, INBOX_COMPONENT, migrateWithin, RETURNS_COMPONENT } from './schema.js';

const { bigint, int, text, boolean } = columns;

/** Tables whose PostgreSQL name is the SQLite one with the component's prefix. */
const prefixed = (
  prefix: string,
  tables: readonly (Omit<TableCopy, 'table'> & { from: string })[],
): TableCopy[] => tables.map((t) => ({ ...t, table: `${prefix}${t.from}` }));

function componentCopy(component: Component, tables: readonly TableCopy[]) {
  return {
    lockKey: component.lockKey,
    versionCode: component.newerCode,
    required: false,
    tables,
    occupied: (tx: Parameters<StoreCopy['occupied']>[0]) =>
      occupiedBy(tx, {
        versions: component.versions,
        what: component.what,
        tables: tables.map((t) => t.table),
      }),
    async createSchema(tx: Parameters<StoreCopy['createSchema']>[0], now: number) {
      await migrateWithin(tx, component, now);
    },
  } satisfies Partial<StoreCopy>;
}

const RETURNS_TABLES = prefixed('returns_', [
  {
    from: 'sources',
    columns: [
      bigint('item_id'),
      text('folder'),
      text('file_name'),
      text('sha256'),
      bigint('claimed_at'),
      text('day'),
      text('status_path'),
      bigint('version'),
      bigint('written_version'),
    ],
  },
  {
    from: 'jobs',
    columns: [
      text('job_id'),
      bigint('source_id'),
      bigint('item_id'),
      int('row_index'),
      text('label'),
      text('job_name'),
      bigint('recorded_at'),
      text('status'),
      // The service's job as it answered, kept as text: a poll compares it byte for byte.
      text('job_json'),
      bigint('next_poll_at'),
      int('unchanged_polls'),
      int('polls'),
      boolean('done'),
      text('gave_up'),
      bigint('updated_at'),
    ],
  },
  {
    from: 'events',
    columns: [
      text('id'),
      text('job_id'),
      text('business_status'),
      text('status'),
      bigint('final_at'),
      text('final_day'),
      text('event_json'),
      bigint('updated_at'),
    ],
  },
  {
    from: 'documents',
    columns: [
      text('sending_event_id'),
      text('file_reference'),
      text('job_id'),
      text('type'),
      text('name'),
      text('content_type'),
      bigint('size'),
      text('path'),
      text('state'),
      int('failures'),
      bigint('next_try_at'),
      text('last_error'),
      text('md5'),
      bigint('done_at'),
    ],
  },
  { from: 'csv_days', columns: [text('day'), bigint('rows'), bigint('written_at')] },
  // The feed's cursor (journal-history-cursor) among them: a history id the journal's copy keeps.
  { from: 'meta', columns: [text('key'), text('value')] },
]);

/** returns.sqlite: jobs followed, their sending events and documents, the CSV days written. */
export const RETURNS_COPY: StoreCopy = {
  name: 'returns',
  what: 'returns.sqlite',
  sqliteVersion: RETURNS_SCHEMA_VERSION,
  ...componentCopy(RETURNS_COMPONENT, RETURNS_TABLES),
  counts: [
    {
      label: 'followed jobs',
      sql: 'SELECT count(*) AS n FROM jobs',
      parts: [{ label: 'open', sql: 'SELECT count(*) AS n FROM jobs WHERE done = 0' }],
    },
    { label: 'source files', sql: 'SELECT count(*) AS n FROM sources' },
    {
      label: 'sending events',
      sql: 'SELECT count(*) AS n FROM events',
      parts: [{ label: 'final', sql: 'SELECT count(*) AS n FROM events WHERE final_at IS NOT NULL' }],
    },
    {
      label: 'documents',
      sql: 'SELECT count(*) AS n FROM documents',
      parts: [
        { label: 'written', sql: "SELECT count(*) AS n FROM documents WHERE state = 'done'" },
        {
          label: 'to fetch',
          sql: "SELECT count(*) AS n FROM documents WHERE state IN ('pending', 'writing')",
        },
        { label: 'parked', sql: "SELECT count(*) AS n FROM documents WHERE state = 'parked'" },
      ],
    },
    { label: 'daily CSVs written', sql: 'SELECT count(*) AS n FROM csv_days' },
  ],
};

const INBOX_TABLES = prefixed('inbox_', [
  // WITHOUT ROWID tables: read in the order of their primary key.
  {
    from: 'peppol_saved',
    key: 'id',
    columns: [text('id'), bigint('created_at'), bigint('saved_at'), text('file_stem')],
  },
  // The Peppol poll's high-water mark among them.
  { from: 'meta', key: 'key', columns: [text('key'), text('value')] },
  { from: 'webhook_seen', key: 'id', columns: [text('id'), text('event_type'), bigint('received_at')] },
]);

/** inbox.sqlite: Peppol documents saved, the poll's high-water mark, webhook ids already handled. */
export const INBOX_COPY: StoreCopy = {
  name: 'inbox',
  what: 'inbox.sqlite',
  sqliteVersion: INBOX_SCHEMA_VERSION,
  ...componentCopy(INBOX_COMPONENT, INBOX_TABLES),
  counts: [
    { label: 'Peppol documents saved', sql: 'SELECT count(*) AS n FROM peppol_saved' },
    { label: 'webhook ids seen', sql: 'SELECT count(*) AS n FROM webhook_seen' },
  ],
};

/** The state folder's stores, in the order they are copied. */
export const STATE_STORES: readonly StoreCopy[] = [JOURNAL_COPY, RETURNS_COPY, INBOX_COPY];

export interface StateCopyOptions extends Omit<CopyOptions, 'stores' | 'sources'> {
  /** The three files; returns.sqlite and inbox.sqlite may be absent (nothing to copy). */
  sources: { journal: string; returns: string; inbox: string };
}

/**
 * A stopped agent's journal, returns store and inbox store copied into an empty PostgreSQL
 * database, in one transaction (journal/postgres/copy.ts says how, and what it refuses).
 */
export function copyStateToPostgres(options: StateCopyOptions): Promise<CopyResult> {
  return copyToPostgres({ ...options, stores: STATE_STORES });
}
