export type { ClusterConfig } from './cluster-schema.js';
export { modeForInputSource, resolveFolderMode } from './folder-mode.js';
export { renderExampleYaml, renderJsonSchema, staleGeneratedFiles, writeGeneratedFiles } from './generate.js';
export { type InspectionConfig, inspectionSchema } from './inspection-schema.js';
export { JOURNAL_FILE, journalLocationOf } from './journal-location.js';
export type { JournalConfig } from './journal-schema.js';
export {
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  type ParseConfigDeps,
  parseConfig,
  readSecretFile,
} from './load.js';
export { REDACTED, redactedConfig } from './redact.js';
export {
  type AgentConfig,
  type AgentConfigInput,
  agentConfigSchema,
  FOLDER_MODES,
  type FolderConfig,
  type FolderMode,
  LOG_LEVELS,
  type SandboxConfig,
  type ServiceConfig,
  type StabilityRule,
} from './schema.js';
export { readTlsMaterial } from './tls-files.js';
export { formatByteSize, formatDuration, parseByteSize, parseDuration } from './units.js';
