/**
 * SFTP drop folders, built on the transport in src/sftp/: polling, stability over listings, claim,
 * spool, remote finish.
 */
export { finishRemote, freeRemoteName, type RemoteOutcome } from './remote-finalize.js';
export { type SftpFolderSettings, SftpSource, type SftpSourceOptions, type SpoolFile } from './source.js';
export { createSftpFolderSource, type SftpFolderSource, type SftpSourceDeps } from './source-factory.js';
export { type IntakePlace, intakeOf } from './source-paths.js';
export { type ReconcileDecision, reconcile, sameRemoteFile } from './source-reconcile.js';
export { ListingTracker, type ListingVerdict, type ReadyFile } from './stability.js';
