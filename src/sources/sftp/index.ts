/**
 * SFTP: the transport (one server handle: control connection + transfer pool, host key pinning)
 * and the folder source built on it (polling, stability over listings, claim, spool, remote finish).
 */
export { endpointFromConfig } from './endpoint.js';
export { finishRemote, freeRemoteName, type RemoteOutcome } from './remote-finalize.js';
export { openSftpServer } from './server.js';
export { type SftpFolderSettings, SftpSource, type SftpSourceOptions, type SpoolFile } from './source.js';
export { createSftpFolderSource, type SftpFolderSource, type SftpSourceDeps } from './source-factory.js';
export { type IntakePlace, intakeOf } from './source-paths.js';
export { type ReconcileDecision, reconcile, sameRemoteFile } from './source-reconcile.js';
export { ListingTracker, type ListingVerdict, type ReadyFile } from './stability.js';
export type {
  DownloadResult,
  HostKeyPin,
  OpenSftpServerOptions,
  RemoteEntry,
  SftpEndpoint,
  SftpServer,
  UploadContent,
} from './types.js';
