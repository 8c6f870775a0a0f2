export { forgetClaimNote, type RecoveredFile, recoverProcessing } from './claim.js';
export type { RejectedEntry } from './local-source.js';
export { type UnreadableFile, unreadableLine } from './unreadable.js';
