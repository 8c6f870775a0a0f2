/**
 * Rows of the journal's read queries as the read API answers them, for both readers (SQLite and
 * PostgreSQL select the same columns under the same names).
 */
import { opt, type SqlRow } from '../core/sqlite-store.js';
import type {
  DoneJobItem,
  HistoryStep,
  HistoryTally,
  PendingUpload,
  UnfinishedFile,
  WaitingFiles,
} from './types.js';

/** A row as a driver answers it. */
export type ReadRow = Record<string, unknown>;

const optional = <T>(value: unknown): T | undefined => opt<T>(value as SqlRow[string] | undefined);

export function toDoneJobItem(r: ReadRow): DoneJobItem {
  const isRow = r['kind'] === 'row' && r['parent_id'] !== null;
  return {
    cursor: r['hid'] as number,
    itemId: r['id'] as number,
    rowIndex: optional(r['row_index']),
    label: optional(r['label']),
    jobId: r['job_id'] as string,
    jobName: optional(r['job_name']),
    doneAt: r['done_at'] as number,
    source: isRow
      ? {
          itemId: r['parent_id'] as number,
          folder: r['p_folder'] as string,
          fileName: r['p_file_name'] as string,
          sourcePath: optional(r['p_source_path']),
          relativePath: optional(r['p_relative_path']),
          sha256: r['p_sha256'] as string,
          claimedAt: r['p_created_at'] as number,
        }
      : {
          itemId: r['id'] as number,
          folder: r['folder'] as string,
          fileName: r['file_name'] as string,
          sourcePath: optional(r['source_path']),
          relativePath: optional(r['relative_path']),
          sha256: r['sha256'] as string,
          claimedAt: r['created_at'] as number,
        },
  };
}

export function toHistoryTally(r: ReadRow): HistoryTally {
  return {
    folder: String(r['folder']),
    kind: String(r['kind']),
    from: optional(r['from_state']),
    to: String(r['to_state']),
    rejectCode: optional(r['reject_code']),
    entries: Number(r['entries']),
  };
}

export function toHistoryStep(r: ReadRow): HistoryStep {
  return {
    id: Number(r['id']),
    from: optional(r['from_state']),
    to: String(r['to_state']),
    kind: String(r['kind']),
    folder: String(r['folder']),
    rejectCode: optional(r['reject_code']),
  };
}

export function toPendingUpload(r: ReadRow): PendingUpload {
  const deadline = Number(r['upload_deadline']);
  return {
    itemId: Number(r['id']),
    folder: String(r['folder']),
    fileName: String(r['file_name']),
    deadline,
    openedAt: r['opened_at'] === null ? deadline : Number(r['opened_at']),
    ...(typeof r['owner'] === 'string' ? { owner: r['owner'] } : {}),
  };
}

export function toWaitingFiles(r: ReadRow): WaitingFiles {
  return {
    folder: String(r['folder']),
    state: String(r['state']),
    count: Number(r['n']),
    oldestAt: Number(r['oldest']),
  };
}

export function toUnfinishedFile(r: ReadRow): UnfinishedFile {
  return {
    id: Number(r['id']),
    folder: String(r['folder']),
    fileName: String(r['file_name']),
    state: String(r['state']),
    claimedAt: Number(r['created_at']),
    jobId: optional(r['job_id']),
    ...(typeof r['owner'] === 'string' ? { owner: r['owner'] } : {}),
  };
}
