export {
  type ClaimResult,
  claimFile,
  type FileStamp,
  PROCESSING_DIR,
  type RecoveredFile,
  recoverProcessing,
  releaseClaim,
} from './claim.js';
export { LocalSource, type LocalSourceOptions, type RejectedEntry } from './local-source.js';
export type { ProbeReadable } from './observe-file.js';
export {
  DEFAULT_MARKER_SUFFIXES,
  DEFAULT_SETTLE_MS,
  isIgnoredName,
  type Observation,
  observe,
  type StabilityRule,
  type StabilityState,
} from './stability.js';
export type { ClaimedFile, LocalFolderConfig } from './types.js';
export { UNREADABLE_CODE, type UnreadableFile, unreadableLine } from './unreadable.js';
