/**
 * The SFTP transport, shared by the SFTP drop folders (sources/sftp) and the SFTP output targets:
 * one server handle (control connection + transfer pool, reconnect with backoff), host key pinning,
 * pipelined checked download, atomic upload.
 */
export { endpointFromConfig } from './endpoint.js';
export { openSftpServer } from './server.js';
export type {
  DownloadResult,
  HostKeyPin,
  OpenSftpServerOptions,
  RemoteEntry,
  SftpEndpoint,
  SftpServer,
  UploadContent,
} from './types.js';
