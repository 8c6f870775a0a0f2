/**
 * The PostgreSQL journal. Imported on its own (not through ../index.ts), so an agent whose journal
 * is a SQLite file never loads pg.
 */

export { PostgresCluster, PostgresClusterReader } from './cluster.js';
export type { CopyCount } from './copy.js';
export { PostgresJournal } from './journal.js';
export {
  type ProbeAnswer,
  probePostgres,
} from './probe.js';
export { PostgresJournalReader } from './reader.js';
