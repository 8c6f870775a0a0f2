export {
  type AgentIdentity,
  type AgentRecord,
  agentIdentity,
  type ClusterStore,
  type TaskClaim,
} from './cluster.js';
export { folderTag } from './job-name.js';
export {
  describeLocation,
  type JournalLocation,
  journalFiles,
  type PostgresConnection,
  type PostgresTls,
} from './location.js';
export { acquireJournalLock } from './lock.js';
export { openCluster, openClusterReader, openJournal, openJournalReader } from './open.js';
export { pruneJournal } from './prune.js';
export type { JournalItem } from './schema.js';
export {
  DEFAULT_UPLOAD_MARGIN_MS,
  fileChange,
  isFinal,
  needsUpload,
  recoveryAction,
} from './states.js';
export type {
  JournalReader,
  JournalStore,
  TakenOver,
  TakeOverScope,
} from './store.js';
export type {
  ClaimInput,
  DoneJobItem,
  HistoryEntry,
  PendingUpload,
  RecordedClaim,
  RecoveryStep,
  RowInput,
  TransitionFields,
  UnfinishedFile,
  WaitingFiles,
} from './types.js';
