/**
 * What every status format for the ERP is to the follower: something it asks, at each step, to
 * write what is due from the store, and tells when it failed. The JSON status files
 * (status-files.ts) and the daily CSV (status-csv.ts) implement it; status-writers.ts lists the
 * formats. A new format is one file implementing StatusFormat, reading its own config key, and
 * its line in that list.
 */
import type { ReturnsConfig } from '../config/returns-schema.js';
import type { Logger } from '../core/logger.js';
import type { TaskClaim } from '../journal/index.js';
import type { OutputTarget } from '../outputs/types.js';
import type { ReturnsStore } from './store.js';

/** What a status format is built with. */
export interface StatusWriterContext {
  store: ReturnsStore;
  /** returns.statuses.target */
  target: OutputTarget;
  config: ReturnsConfig;
  log: Logger;
  /** The follower's loop period (real ms): how often a step comes while there is work. */
  periodMs: number;
  /** The follower is stopping: a long write ends early (what is left is written at the next start). */
  stopping(): boolean;
  /** Claims a task run once across the agents on the journal (absent: every task is this agent's). */
  claimTask?: TaskClaim;
}

export interface StatusWriter {
  /** The log message of a failed write (the error and its code are logged with it). */
  readonly failed: string;
  /** After a failed write, it is asked again this much later (clock ms). */
  readonly retryMs: number;
  /** Writes what is due at `now` (clock ms); answers when it is due next (clock ms; `now`: at the next step). */
  write(now: number): Promise<number>;
  /** The last pass of a stop, kept short (absent: nothing is written at a stop). */
  lastPass?(): Promise<void>;
}

/** A status format: its writer, or undefined when its config key turns it off. */
export type StatusFormat = (context: StatusWriterContext) => StatusWriter | undefined;
