import type { ScanOrderRule } from '../scan-order.js';
import type { StabilityRule } from './stability.js';

/** `order` and `maxFilesPerScan`: which complete files each pass of the stat loop claims first. */
export interface LocalFolderConfig extends ScanOrderRule {
  /** The folder's name in config and logs (maps to a workflow). */
  name: string;
  path: string;
  /** Globs on the file name; empty = every name. Case-insensitive. */
  include?: readonly string[];
  exclude?: readonly string[];
  stability: StabilityRule;
  /** Network mounts (NFS/SMB) where change events are unreliable: scan every `pollIntervalMs`. */
  usePolling?: boolean;
  /** Default 5,000 ms. */
  pollIntervalMs?: number;
  /** More temporary suffixes never taken, on top of `.tmp`, `.part`, … */
  tempSuffixes?: readonly string[];
  /** Take files in sub-folders too, down to `depth` levels; absent: the folder itself only. */
  recursive?: { depth: number } | undefined;
}

/** A complete file, already moved into `.processing/`; the pipeline owns it from here. */
export interface ClaimedFile {
  /** LocalFolderConfig.name */
  folder: string;
  /** The name the ERP gave it (the claimed name may carry a number if a leftover had that name). */
  name: string;
  originalPath: string;
  claimedPath: string;
  /** Size and mtime re-checked after the claim rename. */
  size: number;
  mtimeMs: number;
  /** done-marker rule: the marker, moved into `.processing/` beside the file. */
  markerPath?: string;
}
