/** The rows of returns.sqlite as the follower sees them, and their mapping from SQLite rows. */
import { opt, type SqlRow as Row } from '../core/sqlite-store.js';

export interface SourceRow {
  itemId: number;
  folder: string;
  fileName: string;
  sha256: string;
  claimedAt: number;
  day: string;
  statusPath: string;
  version: number;
  writtenVersion: number;
}

export interface JobRow {
  jobId: string;
  sourceId: number;
  itemId: number;
  rowIndex: number | undefined;
  label: string | undefined;
  jobName: string | undefined;
  recordedAt: number;
  status: string | undefined;
  jobJson: string | undefined;
  nextPollAt: number;
  unchangedPolls: number;
  polls: number;
  done: boolean;
  gaveUp: string | undefined;
}

export interface EventRow {
  id: string;
  jobId: string;
  businessStatus: string;
  status: string;
  finalAt: number | undefined;
  finalDay: string | undefined;
  eventJson: string;
}

/** `parked`: its download failed past the retry policy's limit; `returns retry` takes it again. */
export type DocumentState = 'pending' | 'writing' | 'done' | 'parked';

export interface DocumentRow {
  sendingEventId: string;
  fileReference: string;
  jobId: string;
  type: string;
  name: string | undefined;
  contentType: string | undefined;
  size: number | undefined;
  path: string;
  state: DocumentState;
  failures: number;
  nextTryAt: number;
  lastError: string | undefined;
}

/** A new job found in the intake journal. */
export interface NewJob {
  jobId: string;
  source: {
    itemId: number;
    folder: string;
    fileName: string;
    sha256: string;
    claimedAt: number;
    day: string;
  };
  statusPath: (collision: boolean) => string;
  itemId: number;
  rowIndex: number | undefined;
  label: string | undefined;
  jobName: string | undefined;
  recordedAt: number;
  firstPollAt: number;
}

/** A sending event as one page of a poll records it. */
export interface PolledEvent {
  id: string;
  businessStatus: string;
  status: string;
  json: string;
  finalAt?: number;
  finalDay?: string;
}

/** A proof to fetch, as a poll first records it. */
export type NewDocument = Omit<DocumentRow, 'state' | 'failures' | 'lastError'>;

/** The job's own row after a poll (its events and documents are recorded page by page before). */
export interface PollRecord {
  jobId: string;
  status: string;
  jobJson: string;
  nextPollAt: number;
  unchangedPolls: number;
  done: boolean;
  gaveUp?: string;
  /** Something the status file shows changed. */
  changed: boolean;
}

export type { Row };

export const toSource = (r: Row): SourceRow => ({
  itemId: r['item_id'] as number,
  folder: r['folder'] as string,
  fileName: r['file_name'] as string,
  sha256: r['sha256'] as string,
  claimedAt: r['claimed_at'] as number,
  day: r['day'] as string,
  statusPath: r['status_path'] as string,
  version: r['version'] as number,
  writtenVersion: r['written_version'] as number,
});

export const toJob = (r: Row): JobRow => ({
  jobId: r['job_id'] as string,
  sourceId: r['source_id'] as number,
  itemId: r['item_id'] as number,
  rowIndex: opt(r['row_index']),
  label: opt(r['label']),
  jobName: opt(r['job_name']),
  recordedAt: r['recorded_at'] as number,
  status: opt(r['status']),
  jobJson: opt(r['job_json']),
  nextPollAt: r['next_poll_at'] as number,
  unchangedPolls: r['unchanged_polls'] as number,
  polls: r['polls'] as number,
  done: r['done'] === 1,
  gaveUp: opt(r['gave_up']),
});

export const toEvent = (r: Row): EventRow => ({
  id: r['id'] as string,
  jobId: r['job_id'] as string,
  businessStatus: r['business_status'] as string,
  status: r['status'] as string,
  finalAt: opt(r['final_at']),
  finalDay: opt(r['final_day']),
  eventJson: r['event_json'] as string,
});

export const toDocument = (r: Row): DocumentRow => ({
  sendingEventId: r['sending_event_id'] as string,
  fileReference: r['file_reference'] as string,
  jobId: r['job_id'] as string,
  type: r['type'] as string,
  name: opt(r['name']),
  contentType: opt(r['content_type']),
  size: opt(r['size']),
  path: r['path'] as string,
  state: r['state'] as DocumentState,
  failures: r['failures'] as number,
  nextTryAt: r['next_try_at'] as number,
  lastError: opt(r['last_error']),
});
