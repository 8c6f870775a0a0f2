/**
 * What the agent leaves beside a finished file for the ERP: `<file>.result.json` in the archive,
 * `<file>.error.json` and `<file>.error.txt` in the error folder. The records are built by pure
 * functions; `writeFileAtomic` (core/fs.ts) makes sure an ERP never reads half a file (temp name,
 * fsync, rename).
 */

import path from 'node:path';
import type { ErrorCode } from '../core/error-codes.js';
import type { JournalItem } from '../journal/index.js';

export interface ResultRecord {
  status: 'uploaded';
  file: string;
  folder: string;
  workflowId: string;
  /** The managed company the job was created as (the item's, decided at its claim); absent for none. */
  managedCompanyId?: string;
  jobId: string | undefined;
  jobName: string | undefined;
  sha256: string;
  size: number | undefined;
  md5: string | undefined;
  claimedAt: string;
  archivedAt: string;
}

export interface ErrorRecord {
  status: 'rejected';
  file: string;
  folder: string;
  workflowId: string;
  code: ErrorCode;
  reason: string;
  details?: Record<string, unknown>;
  sha256: string;
  size: number | undefined;
  jobId?: string;
  claimedAt: string;
  rejectedAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function resultRecord(item: JournalItem, now: number): ResultRecord {
  return {
    status: 'uploaded',
    file: item.fileName,
    folder: item.folder,
    workflowId: item.workflowId,
    ...(item.managedCompanyId ? { managedCompanyId: item.managedCompanyId } : {}),
    jobId: item.jobId,
    jobName: item.jobName,
    sha256: item.sha256,
    size: item.size,
    md5: item.uploadedMd5,
    claimedAt: iso(item.createdAt),
    archivedAt: iso(now),
  };
}

export function errorRecord(item: JournalItem, now: number, details?: Record<string, unknown>): ErrorRecord {
  return {
    status: 'rejected',
    file: item.fileName,
    folder: item.folder,
    workflowId: item.workflowId,
    code: item.rejectCode ?? 'DOCEX_REJECTED',
    reason: item.rejectReason ?? 'refused',
    ...(details && Object.keys(details).length > 0 ? { details } : {}),
    sha256: item.sha256,
    size: item.size,
    ...(item.jobId ? { jobId: item.jobId } : {}),
    claimedAt: iso(item.createdAt),
    rejectedAt: iso(now),
  };
}

/** The plain-text twin of the error record, for an operator who opens the error folder. */
export function errorText(record: ErrorRecord, report?: string, headline?: string): string {
  const lines = [
    headline ?? `${record.file} was not sent.`,
    '',
    `Reason: ${record.reason}`,
    `Code:   ${record.code}`,
    `Folder: ${record.folder} (workflow ${record.workflowId})`,
    `SHA-256: ${record.sha256}`,
    `Refused at: ${record.rejectedAt}`,
  ];
  if (report) lines.push('', report.trimEnd());
  lines.push('', 'Fix the file (or the folder configuration) and drop it again.');
  return `${lines.join('\n')}\n`;
}

/**
 * `archive/2026-11-21`: the day (UTC) the file was archived; a file of a recursive folder's
 * sub-folder keeps its sub-path above the day (`archive/acme/invoices/2026-11-21`).
 */
export function archiveDayDir(archiveDir: string, now: number, subFolders: readonly string[] = []): string {
  return path.join(archiveDir, ...subFolders, iso(now).slice(0, 10));
}
