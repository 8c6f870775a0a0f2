/**
 * The PostgreSQL journal. Imported on its own (not through ../index.ts), so an agent whose journal
 * is a SQLite file never loads pg.
 */

export { AGENT_ROWS_KEPT_DAYS, PostgresCluster, PostgresClusterReader } from './cluster.js';
export {
  type AbsentStore,
  type Column,
  type CopiedStore,
  type CopyCount,
  type CopyOptions,
  type CopyProgress,
  type CopyResult,
  type CopySources,
  type CountQuery,
  columns,
  copiedColumns,
  copyToPostgres,
  DEFAULT_BATCH_ROWS,
  JOURNAL_COPY,
  occupiedBy,
  type StoreCopy,
  type StoreName,
  type TableCopy,
} from './copy.js';
export { PostgresJournal } from './journal.js';
export { APPLICATION_NAME, poolConfig, postgresConnection, sslOptions } from './pool.js';
export {
  JOURNAL_TABLE_RIGHTS,
  type PostgresProbe,
  type ProbeAnswer,
  type ProbeFailure,
  type ProbeOptions,
  probePostgres,
  type TablePrivilege,
} from './probe.js';
export { PostgresJournalReader } from './reader.js';
export { PG_SCHEMA_VERSION } from './schema.js';
