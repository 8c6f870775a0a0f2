export {
  forgetClaimNote,
  PROCESSING_DIR,
  type RecoveredFile,
  recoverProcessing,
  removeEmptiedClaimDirs,
} from './claim.js';
export type { RejectedEntry } from './local-source.js';
export { type UnreadableFile, unreadableLine } from './unreadable.js';
