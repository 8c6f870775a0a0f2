import { isoTime } from '../core/clock.js';
import type { Workflow } from '../domain/wire.js';
import type { ContentItem } from './content/index.js';
import type { BlobRecord, DocumentEntry, JobRecord, SendingEventRecord } from './records.js';

export interface NewEventInput {
  job: JobRecord;
  workflow: Workflow;
  item: ContentItem;
  original: BlobRecord;
  extraInfo?: { name: string; value: unknown }[];
  executionDateUtc?: string | null;
  invoiceId?: string;
  resendOf?: string;
}

/** The record of a new sending event in NOT_STARTED, its tasks in the workflow's order. */
export function newSendingEvent(
  input: NewEventInput,
  at: { id: string; now: number; nextTransitionAt: number },
): SendingEventRecord {
  const created = isoTime(at.now);
  const original: DocumentEntry = {
    fileReference: input.original.id,
    name: input.original.name,
    type: 'ORIGINAL',
    contentType: input.original.contentType,
    size: input.original.size,
    createdAt: created,
  };
  const tasks = [...input.workflow.tasks].sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
  return {
    id: at.id,
    jobId: input.job.id,
    jobName: input.job.name,
    sendingSourceFileReference: input.item.sourceRef,
    jobAuthor: input.job.jobAuthor,
    startDate: created,
    endDate: null,
    executionDateUtc: input.executionDateUtc ?? null,
    properties: [{ name: 'recipient', value: input.item.recipient }],
    extraInfo: input.extraInfo ?? [],
    workflowName: input.workflow.name,
    workflowId: input.workflow.id,
    status: 'IN_PROGRESS',
    businessStatus: 'NOT_STARTED',
    approval: null,
    errorList: [],
    warningList: [],
    ...(input.invoiceId ? { invoiceId: input.invoiceId } : {}),
    dataRetention: { periodInSeconds: 365 * 24 * 3600 },
    documents: [original],
    taskDetails: tasks.map((t, i) => ({
      taskType: t.type,
      order: t.order ?? i + 1,
      status: 'NOT_STARTED',
      startedAt: null,
      endedAt: null,
      errors: [],
    })),
    resendOf: input.resendOf ?? null,
    companyId: input.job.companyId,
    departmentId: input.job.departmentId,
    recipient: input.item.recipient,
    outcomeHint: input.item.outcomeHint,
    ...(input.item.failure ? { forcedOutcome: 'FAILURE', outcomeError: input.item.failure } : {}),
    nextTransitionAt: at.nextTransitionAt,
  };
}
