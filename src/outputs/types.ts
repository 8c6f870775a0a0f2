import type { Readable } from 'node:stream';

/** What a retention sweep removed. */
export interface Removed {
  files: number;
  bytes: number;
  /** More counts for the log line (the journal's rows and history entries). */
  detail?: Record<string, number>;
}

/** What an output target is given to write: text, bytes, or a stream opened on demand (and again on retry). */
export type OutputContent = string | Uint8Array | (() => Readable);

/**
 * Agents sharing an output folder (a shared journal) write each target through temp names of their
 * own. A write that a SIGKILL cut leaves its temp file, and the dead agent never comes back to
 * remove it; the write itself is done again by another agent (nothing was marked written), which
 * removes the dead agent's temp file of that target once its own write is in place.
 */
export interface SharedWriting {
  /** This agent's temp names' writer (placeWriter). */
  writer: string;
  /** The writers of agents that died (no heartbeat, no goodbye) and are not running again. */
  deadWriters(): Promise<readonly string[]>;
}

/**
 * A folder the ERP reads: delivery proofs, status files, incoming Peppol documents, error reports.
 * Every write lands under a temporary name first and is renamed into place, so the ERP never reads
 * a partial file. Paths are relative, with `/` separators; sub-folders are created as needed.
 */
export interface OutputTarget {
  /** For logs: `local:/srv/erp/proofs` or `sftp://user@host:22/out` (never a secret). */
  readonly description: string;
  write(relPath: string, content: OutputContent): Promise<void>;
  exists(relPath: string): Promise<boolean>;
  /** Bytes of the file in place, undefined when there is none (to tell a whole file from a torn one). */
  sizeOf?(relPath: string): Promise<number | undefined>;
  /** Retention: removes files last written before `cutoffMs` (a folder not made yet holds none). */
  removeOlderThan?(cutoffMs: number): Promise<Removed>;
  close(): Promise<void>;
}
