/**
 * What others read of the return path's store, read-only: the proofs written (metrics) and what
 * is known of one job (the status command). Never migrates, checkpoints or writes, on either
 * backend; opened at the first read, so an agent whose return path is off costs nothing, and a
 * store that does not exist yet reads as nothing. open-stores.ts opens one (openReturnsReader).
 */
import type { DocumentRow, EventRow, JobRow } from './store-rows.js';

/** A job as the return path follows it: undefined `job` when it is not polled yet. */
export interface FollowedJob {
  job: JobRow | undefined;
  events: EventRow[];
  documents: DocumentRow[];
}

export interface ReturnsReader {
  /** Proof documents written (state done); undefined while the store does not exist or cannot be read. */
  proofsArchived(): Promise<number | undefined>;
  /**
   * The job, its sending events (by id) and their documents (by event, then type); undefined while
   * the store does not exist. Rejects when the store cannot be read.
   */
  followedJob(jobId: string): Promise<FollowedJob | undefined>;
  close(): Promise<void>;
}
