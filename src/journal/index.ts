export {
  type AgentIdentity,
  type AgentRecord,
  type AgentStatus,
  agentIdentity,
  type ClusterOptions,
  type ClusterReader,
  type ClusterStore,
  LocalCluster,
  type TaskClaim,
} from './cluster.js';
export {
  deterministicJobName,
  folderTag,
  type JobNameInput,
  jobNameMatches,
  MAX_JOB_NAME_LENGTH,
  type ParsedJobName,
  parseJobName,
  safeStem,
} from './job-name.js';
export {
  describeLocation,
  type JournalLocation,
  journalFiles,
  type PostgresConnection,
  type PostgresTls,
} from './location.js';
export {
  acquireJournalLock,
  type JournalLock,
  LOCK_FILE_NAME,
  type LockOptions,
  type LockOwner,
  processAlive,
  withJournalLock,
} from './lock.js';
export { openCluster, openClusterReader, openJournal, openJournalReader } from './open.js';
export { type PruneTotals, pruneJournal } from './prune.js';
export { stripUrlQueries } from './redact.js';
export { type JournalItem, SCHEMA_VERSION } from './schema.js';
export {
  type ChangeCheck,
  checkTransition,
  DEFAULT_UPLOAD_MARGIN_MS,
  FINAL_STATES,
  type FileIdentity,
  fileChange,
  ITEM_MODES,
  ITEM_STATES,
  type ItemKind,
  type ItemMode,
  type ItemState,
  isDurableMove,
  isFinal,
  legalTargets,
  needsUpload,
  type RecoveryAction,
  type RecoveryOptions,
  type RecoverySubject,
  recoveryAction,
  type TransitionCheck,
  type TransitionSubject,
} from './states.js';
export type {
  FailedTry,
  JournalReader,
  JournalStore,
  LeaseRenewal,
  LostLease,
  TakenOver,
  TakeOverScope,
} from './store.js';
export type {
  ClaimInput,
  DoneJobItem,
  FileMatch,
  HistoryEntry,
  HistoryStep,
  JournalOptions,
  JournalStats,
  PendingUpload,
  PruneBatch,
  RecordedClaim,
  RecoveryStep,
  RowInput,
  TransitionFields,
  UnfinishedFile,
  WaitingFiles,
} from './types.js';
