import type { Readable } from 'node:stream';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

/** Host key pin: `SHA256:base64` fingerprints as `ssh-keygen -l` prints them, and/or a known_hosts file. */
export interface HostKeyPin {
  sha256?: readonly string[];
  knownHostsFile?: string;
}

/** Where and how to connect. Secrets (password, privateKey, passphrase) are never logged. */
export interface SftpEndpoint {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKey?: Buffer;
  passphrase?: string;
  hostKey: HostKeyPin;
  keepaliveIntervalMs: number;
  readyTimeoutMs: number;
}

export interface RemoteEntry {
  name: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  mtimeMs: number;
}

/** Where the temp file of a download lives and what the local file is stamped with before its rename. */
export interface DownloadOptions {
  /** Folder for the `.part` file (same file system as localPath); default: localPath's folder. */
  tempDir?: string | undefined;
  /** The local file's mtime (ms), set before the rename: the copy never appears with another one. */
  mtimeMs?: number | undefined;
}

export interface DownloadResult {
  bytes: number;
}

export type UploadContent = string | Uint8Array | (() => Readable);

export interface UploadOptions {
  /** Folder for the temporary file (same file system as the target); default: the target's folder. */
  tempDir?: string | undefined;
  /** Write straight to remotePath, no temp name (only for servers that refuse rename). */
  inPlace?: boolean | undefined;
  /**
   * The writing process (tempBaseName's `writer`): another process writing the same path at once
   * (agents sharing an output folder) has a temp file of its own. Absent: one temp name per path.
   */
  writer?: string | undefined;
  /** Other writers whose temp files of this path go once the upload is in place (dead agents'). */
  removeWriters?: readonly string[] | undefined;
}

/** One server: a control session (listing, rename, mkdir, remove; operations serialised) + a small pool for transfers. */
export interface SftpServer {
  /** `sftp://user@127.0.0.1:2222` — no secrets. */
  readonly description: string;
  list(dir: string): Promise<RemoteEntry[]>;
  stat(path: string): Promise<RemoteEntry | undefined>;
  /** Refused by the server → DocexError DOCEX_SFTP_RENAME_REFUSED. */
  rename(from: string, to: string): Promise<void>;
  mkdirp(dir: string): Promise<void>;
  remove(path: string): Promise<void>;
  /**
   * Removes an empty folder (RMDIR). `kept`: the server refused (not empty, or any other status);
   * `gone`: there was no such folder. A broken connection throws.
   */
  removeEmptyFolder(dir: string): Promise<'removed' | 'gone' | 'kept'>;
  /** Fast download to localPath via temp name + fsync + rename; size checked against expectedSize → DOCEX_SFTP_SIZE_MISMATCH. */
  download(
    remotePath: string,
    localPath: string,
    expectedSize: number,
    signal?: AbortSignal,
    options?: DownloadOptions,
  ): Promise<DownloadResult>;
  /**
   * Upload under a temporary name in the same remote dir (or options.tempDir), then rename into
   * place, replacing an existing file. The parent folder must exist.
   */
  uploadAtomic(content: UploadContent, remotePath: string, options?: UploadOptions): Promise<void>;
  close(): Promise<void>;
}

export interface OpenSftpServerOptions {
  log: Logger;
  /** Connections in the transfer pool (default 3). */
  transfers?: number;
  clock?: Clock;
}
