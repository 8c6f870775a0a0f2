export type { ClusterConfig } from './cluster-schema.js';
export { resolveFolderMode } from './folder-mode.js';
export { type CompanyEntry, companyEntry } from './folder-schema.js';
export { inspectionSchema } from './inspection-schema.js';
export { JOURNAL_FILE, journalLocationOf } from './journal-location.js';
export {
  type LoadedConfig,
  loadConfig,
  parseConfig,
} from './load.js';
export {
  type AgentConfig,
  type AgentConfigInput,
  agentConfigSchema,
  type FolderConfig,
  type FolderMode,
  type ScanOrder,
} from './schema.js';
export { readTlsMaterial } from './tls-files.js';
