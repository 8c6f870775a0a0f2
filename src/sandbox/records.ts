/**
 * The records the sandbox stores for jobs, sending events and blobs, and the wire shape the API
 * answers (decisions.md, Jobs and Sending events). Internal bookkeeping fields never leave the
 * sandbox: `toWireJob`/`toWireSendingEvent` pick the published fields.
 */
import { jobStatusName, type NamesProfile } from '../domain/names-profile.js';
import type { Issue, PayloadJobRequest } from '../domain/wire.js';
import type { ProofInput } from './proofs.js';

export type JobStatus = 'AWAITING_FILE_UPLOAD' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
export type JobKind = 'single-file' | 'payload-pdf' | 'payload-word';
export type BusinessStatus =
  | 'NOT_STARTED'
  | 'SCHEDULED_FOR_EXECUTION'
  | 'IN_PROGRESS'
  | 'SUCCESS'
  | 'FAILURE'
  | 'REJECTED';
export type FinalOutcome = 'SUCCESS' | 'FAILURE' | 'REJECTED';

export interface JobRecord {
  id: string;
  name: string;
  workflowId: string;
  companyId: string;
  departmentId: string;
  filename: string;
  status: JobStatus;
  startDate: string;
  createdAt: string;
  lastModifiedAt: string;
  uploadExpiresAt?: string;
  sendingEventCount: number;
  /** Internal: sending events written so far from the upload (in batches; the count is set with the last). */
  eventsCreated?: number;
  errorList: Issue[];
  kind: JobKind;
  jobAuthor: string;
  payload?: PayloadJobRequest['payload'];
  sendingEventExecutionDateUtc?: string;
  upload?: { size: number; md5: string; blobId: string; uploadedAt: string };
  [key: string]: unknown;
}

export interface DocumentEntry {
  fileReference: string;
  name: string;
  type: 'ORIGINAL' | 'DELIVERY_PROOF' | 'SUBMISSION_REPORT' | 'RETURN_RECEIPT';
  contentType: string;
  size: number;
  createdAt: string;
}

export interface TaskDetail {
  taskType: string;
  order: number;
  status: 'NOT_STARTED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';
  startedAt: string | null;
  endedAt: string | null;
  errors: Issue[];
}

export interface SendingEventRecord {
  id: string;
  jobId: string;
  jobName: string;
  sendingSourceFileReference: string;
  jobAuthor: string;
  startDate: string;
  endDate: string | null;
  executionDateUtc: string | null;
  properties: { name: string; value: unknown }[];
  extraInfo: { name: string; value: unknown }[];
  workflowName: string;
  workflowId: string;
  status: 'IN_PROGRESS' | 'SUCCESS' | 'WARNING' | 'FAILURE';
  businessStatus: BusinessStatus;
  approval: null;
  errorList: Issue[];
  warningList: Issue[];
  invoiceId?: string;
  dataRetention: { periodInSeconds: number };
  documents: DocumentEntry[];
  taskDetails: TaskDetail[];
  resendOf: string | null;
  companyId: string;
  departmentId: string;
  /** Internal: who it goes to, what decides its outcome, when it moves next. */
  recipient: string;
  outcomeHint: string;
  forcedOutcome?: FinalOutcome;
  /** The error a forced FAILURE reports instead of the generic one (a PDF without its recipient). */
  outcomeError?: Issue;
  nextTransitionAt: number;
  [key: string]: unknown;
}

export interface BlobRecord {
  id: string;
  /** File name inside the blob folder. */
  file: string;
  /** Where its bytes begin in `file` (the originals of one upload share a pack); absent: 0. */
  offset?: number;
  name: string;
  contentType: string;
  size: number;
  createdAt: string;
  /** A proof is not kept as a file: its PDF is rendered from this at each download (proofs.ts). */
  proof?: ProofInput;
  [key: string]: unknown;
}

const JOB_WIRE_FIELDS = [
  'id',
  'name',
  'workflowId',
  'companyId',
  'departmentId',
  'filename',
  'status',
  'startDate',
  'createdAt',
  'lastModifiedAt',
  'uploadExpiresAt',
  'sendingEventCount',
  'errorList',
] as const;

/** The job as the API answers it, its status spelt as the names profile says. */
export function toWireJob(job: JobRecord, names: NamesProfile): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of JOB_WIRE_FIELDS) if (job[key] !== undefined) out[key] = job[key];
  out['status'] = jobStatusName(job.status, names);
  return out;
}

const EVENT_INTERNAL_FIELDS = new Set([
  'companyId',
  'departmentId',
  'recipient',
  'outcomeHint',
  'forcedOutcome',
  'outcomeError',
  'nextTransitionAt',
]);

export function toWireSendingEvent(event: SendingEventRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) if (!EVENT_INTERNAL_FIELDS.has(key)) out[key] = value;
  return out;
}
