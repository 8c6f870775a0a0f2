export {
  PROCESSING_DIR,
  type RecoveredFile,
  recoverProcessing,
} from './claim.js';
export { LocalSource, type RejectedEntry } from './local-source.js';
export type { ProbeReadable } from './observe-file.js';
export { type UnreadableFile, unreadableLine } from './unreadable.js';
