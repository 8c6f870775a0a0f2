import { isoTime } from '../core/clock.js';
import type { Workflow } from '../domain/wire.js';
import { saveBlob } from './blobs.js';
import type { ContentItem } from './content.js';
import type { SandboxContext } from './context.js';
import { renderProofPdf } from './proofs.js';
import {
  type BlobRecord,
  type BusinessStatus,
  type DocumentEntry,
  type FinalOutcome,
  isFinalEvent,
  type JobRecord,
  type JobStatus,
  type SendingEventRecord,
} from './records.js';

/**
 * The clock-driven life of jobs and sending events. Nothing moves on its own timers: `tick()`
 * compares the sandbox clock with each event's next transition time, so advancing the clock (or a
 * high speed) runs a whole lifecycle at once and tests stay deterministic.
 *
 * NOT_STARTED -> SCHEDULED_FOR_EXECUTION -> IN_PROGRESS -> SUCCESS | FAILURE | REJECTED
 */
export const STEP_MS = { scheduled: 2000, inProgress: 3000, final: 5000 } as const;

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

export class Lifecycle {
  /** Event id -> its next transition time; only due events are read from the store. */
  private readonly active = new Map<string, number>();
  /** Job id -> end of its upload window. */
  private readonly awaiting = new Map<string, number>();
  private readonly finalizing = new Set<string>();
  /** Jobs whose upload is being received: they must not expire under the upload. */
  readonly uploading = new Set<string>();
  private work: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: SandboxContext) {}

  /** Rebuilds the in-memory sets after a restart. */
  load(): void {
    for (const job of this.ctx.store.iterate<JobRecord>('job')) {
      if (job.status === 'AWAITING_FILE_UPLOAD') this.trackAwaiting(job);
    }
    for (const event of this.ctx.store.iterate<SendingEventRecord>('sending-event')) {
      if (!isFinalEvent(event)) this.active.set(event.id, event.nextTransitionAt);
    }
  }

  trackAwaiting(job: JobRecord): void {
    this.awaiting.set(
      job.id,
      job.uploadExpiresAt ? Date.parse(job.uploadExpiresAt) : Number.POSITIVE_INFINITY,
    );
  }

  isFinalizing(eventId: string): boolean {
    return this.finalizing.has(eventId);
  }

  /** Resolves once every finalisation started so far has been written. */
  idle(): Promise<void> {
    return this.work;
  }

  private step(ms: number): number {
    return Math.max(1, Math.round(ms / this.ctx.settings.speed));
  }

  tick(): void {
    const now = this.ctx.clock.now();
    this.expireJobs(now);
    for (const [id, due] of [...this.active]) {
      if (due > now || this.finalizing.has(id)) continue;
      const event = this.ctx.store.get<SendingEventRecord>('sending-event', id);
      if (!event || isFinalEvent(event)) {
        this.active.delete(id);
        continue;
      }
      this.advance(event, now);
    }
  }

  private advance(event: SendingEventRecord, now: number): void {
    let changed = false;
    while (event.nextTransitionAt <= now) {
      const at = event.nextTransitionAt;
      if (event.businessStatus === 'NOT_STARTED') {
        const earliest = at + this.step(STEP_MS.inProgress);
        const scheduled = event.executionDateUtc ? Date.parse(event.executionDateUtc) : 0;
        event.nextTransitionAt = Math.max(earliest, Number.isNaN(scheduled) ? 0 : scheduled);
        this.setBusiness(event, 'SCHEDULED_FOR_EXECUTION', at);
        changed = true;
      } else if (event.businessStatus === 'SCHEDULED_FOR_EXECUTION') {
        event.nextTransitionAt = at + this.step(STEP_MS.final);
        for (const task of event.taskDetails) {
          task.status = 'IN_PROGRESS';
          task.startedAt = isoTime(at);
        }
        this.setBusiness(event, 'IN_PROGRESS', at);
        changed = true;
      } else {
        if (changed) this.ctx.store.put('sending-event', event);
        this.startFinalize(event.id, at);
        return;
      }
    }
    this.active.set(event.id, event.nextTransitionAt);
    if (changed) this.ctx.store.put('sending-event', event);
  }

  private setBusiness(event: SendingEventRecord, status: BusinessStatus, at: number): void {
    event.businessStatus = status;
    this.ctx.log.debug(
      { sendingEventId: event.id, businessStatus: status, at: isoTime(at) },
      'sending event moved',
    );
    this.ctx.emit({
      type: 'sending.event.status.changed',
      companyId: event.companyId,
      data: { sendingEventId: event.id, jobId: event.jobId, businessStatus: status, status: event.status },
    });
  }

  private outcomeOf(event: SendingEventRecord): FinalOutcome {
    if (event.forcedOutcome) return event.forcedOutcome;
    const hint = `${event.recipient} ${event.outcomeHint}`.toLowerCase();
    if (hint.includes('reject')) return 'REJECTED';
    if (hint.includes('fail')) return 'FAILURE';
    return 'SUCCESS';
  }

  private startFinalize(id: string, at: number): void {
    this.finalizing.add(id);
    this.work = this.work
      .then(() => this.finalize(id, at))
      .catch((err: unknown) =>
        this.ctx.log.error({ err, sendingEventId: id }, 'sending event finalisation failed'),
      )
      .finally(() => this.finalizing.delete(id));
  }

  private async finalize(id: string, at: number): Promise<void> {
    const before = this.ctx.store.get<SendingEventRecord>('sending-event', id);
    if (!before || isFinalEvent(before)) return;
    const outcome = this.outcomeOf(before);
    const endedAt = isoTime(at);
    const channels = before.taskDetails.map((t) => t.taskType);
    const proofInput = {
      sendingEventId: id,
      jobId: before.jobId,
      recipient: before.recipient,
      channels,
      startedAt: before.startDate,
      endedAt,
      outcome,
    };
    const types =
      outcome === 'SUCCESS'
        ? (['DELIVERY_PROOF', 'SUBMISSION_REPORT'] as const)
        : (['SUBMISSION_REPORT'] as const);
    const rendered = [];
    for (const type of types) rendered.push({ type, data: await renderProofPdf({ ...proofInput, type }) });

    // From here on everything is synchronous: no other writer can interleave.
    const event = this.ctx.store.get<SendingEventRecord>('sending-event', id);
    if (!event || isFinalEvent(event)) return;
    const newDocs: DocumentEntry[] = rendered.map(({ type, data }) => {
      const name = `${type === 'DELIVERY_PROOF' ? 'delivery-proof' : 'submission-report'}-${id}.pdf`;
      const blob = saveBlob(this.ctx, { name, contentType: 'application/pdf', data });
      return {
        fileReference: blob.id,
        name,
        type,
        contentType: blob.contentType,
        size: blob.size,
        createdAt: endedAt,
      };
    });
    event.documents.push(...newDocs);
    event.status = outcome === 'SUCCESS' ? 'SUCCESS' : 'FAILURE';
    event.endDate = endedAt;
    const error =
      outcome === 'SUCCESS'
        ? undefined
        : outcome === 'REJECTED'
          ? { code: 'RECIPIENT_REJECTED', message: `the recipient ${event.recipient} rejected the sending` }
          : { code: 'DELIVERY_FAILED', message: `the sending to ${event.recipient} could not be delivered` };
    for (const task of event.taskDetails) {
      task.status = outcome === 'SUCCESS' ? 'SUCCESS' : 'FAILURE';
      task.endedAt = endedAt;
      task.startedAt ??= endedAt;
      if (error) task.errors.push({ ...error, taskType: task.taskType });
    }
    if (error) event.errorList.push(error);
    this.setBusiness(event, outcome, at);
    this.ctx.store.transaction(() => {
      this.ctx.store.put('sending-event', event);
      for (const task of event.taskDetails) {
        this.ctx.store.insert(
          'usage-event',
          {
            id: this.ctx.newId('use'),
            timestamp: endedAt,
            companyId: event.companyId,
            departmentId: event.departmentId,
            jobId: event.jobId,
            sendingEventId: event.id,
            channel: task.taskType,
            unit: 'SENDING',
            quantity: 1,
          },
          { companyId: event.companyId },
        );
      }
    });
    this.active.delete(id);
    for (const doc of newDocs) this.emitFileReady(event, doc);
    this.ctx.log.info(
      { sendingEventId: id, jobId: event.jobId, businessStatus: outcome },
      'sending event final',
    );
    this.completeJobIfDone(event.jobId);
  }

  private completeJobIfDone(jobId: string): void {
    const job = this.ctx.store.get<JobRecord>('job', jobId);
    if (job?.status !== 'PROCESSING') return;
    for (const event of this.ctx.store.iterate<SendingEventRecord>('sending-event', { parentId: jobId })) {
      if (!isFinalEvent(event)) return;
    }
    setJobStatus(this.ctx, job, 'COMPLETED');
  }

  private emitFileReady(event: SendingEventRecord, doc: DocumentEntry): void {
    this.ctx.emit({
      type: 'sending.event.file.ready',
      companyId: event.companyId,
      data: {
        sendingEventId: event.id,
        jobId: event.jobId,
        fileReference: doc.fileReference,
        type: doc.type,
      },
    });
  }

  private expireJobs(now: number): void {
    for (const [id, expiresAt] of [...this.awaiting]) {
      if (expiresAt > now) continue;
      const job = this.ctx.store.get<JobRecord>('job', id);
      if (job?.status !== 'AWAITING_FILE_UPLOAD') {
        this.awaiting.delete(id);
        continue;
      }
      if (this.uploading.has(id) || !job.uploadExpiresAt || Date.parse(job.uploadExpiresAt) > now) continue;
      this.ctx.store.delete('job', id);
      this.awaiting.delete(id);
      this.ctx.log.info(
        { jobId: id, uploadExpiresAt: job.uploadExpiresAt },
        'job expired without upload: deleted',
      );
    }
  }

  /** Creates one sending event in NOT_STARTED; its original document is already stored. */
  createEvent(input: NewEventInput): SendingEventRecord {
    const now = this.ctx.clock.now();
    const at = isoTime(now);
    const original: DocumentEntry = {
      fileReference: input.original.id,
      name: input.original.name,
      type: 'ORIGINAL',
      contentType: input.original.contentType,
      size: input.original.size,
      createdAt: at,
    };
    const tasks = [...input.workflow.tasks].sort((a, b) => (a.order ?? 0) - (b.order ?? 0));
    const event: SendingEventRecord = {
      id: this.ctx.newId('se'),
      jobId: input.job.id,
      jobName: input.job.name,
      sendingSourceFileReference: input.item.sourceRef,
      jobAuthor: input.job.jobAuthor,
      startDate: at,
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
      nextTransitionAt: now + this.step(STEP_MS.scheduled),
    };
    this.ctx.store.insert('sending-event', event, { companyId: event.companyId, parentId: event.jobId });
    this.active.set(event.id, event.nextTransitionAt);
    this.emitFileReady(event, original);
    return event;
  }
}

/** Moves a job to a new status and tells the webhooks. */
export function setJobStatus(
  ctx: SandboxContext,
  job: JobRecord,
  status: JobStatus,
  changes: Partial<JobRecord> = {},
): JobRecord {
  const previousStatus = job.status;
  const updated: JobRecord = { ...job, ...changes, status, lastModifiedAt: isoTime(ctx.clock.now()) };
  if (status !== 'AWAITING_FILE_UPLOAD') delete updated.uploadExpiresAt;
  ctx.store.put('job', updated);
  if (previousStatus !== status) {
    ctx.log.info({ jobId: job.id, status, previousStatus }, 'job status changed');
    ctx.emit({
      type: 'job.status.changed',
      companyId: job.companyId,
      data: { jobId: job.id, status, previousStatus },
    });
  }
  return updated;
}
