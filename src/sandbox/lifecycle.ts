import { setTimeout as sleep } from 'node:timers/promises';
import { isoTime } from '../core/clock.js';
import { isFinalSendingEvent } from '../domain/wire.js';
import type { SandboxContext } from './context.js';
import { applyOutcome, outcomeOf, renderOutcomeDocuments, writeUsage } from './finalize.js';
import { setJobStatus } from './job-status.js';
import { type NewEventInput, newSendingEvent } from './new-sending-event.js';
import type { BusinessStatus, DocumentEntry, JobRecord, SendingEventRecord } from './records.js';
import { processUpload } from './upload-processing.js';

/**
 * The clock-driven life of jobs and sending events. Nothing moves on its own timers: `tick()`
 * compares the sandbox clock with each event's next transition time, so advancing the clock (or a
 * high speed) runs a whole lifecycle at once and tests stay deterministic.
 *
 * NOT_STARTED -> SCHEDULED_FOR_EXECUTION -> IN_PROGRESS -> SUCCESS | FAILURE | REJECTED
 */
export const STEP_MS = { scheduled: 2000, inProgress: 3000, final: 5000 } as const;

export class Lifecycle {
  /** Event id -> its next transition time and its job; only due events are read from the store. */
  private readonly active = new Map<string, { due: number; jobId: string }>();
  /**
   * Job id -> how many of its events are in `active` (not final): a job is done when none is.
   * Asking the store instead read every event of the job at each finalisation, a square of the
   * job's size.
   */
  private readonly unfinished = new Map<string, number>();
  /** No entry of `active` is due before this: a tick before it reads none (a frozen clock costs nothing). */
  private earliestDue = Number.POSITIVE_INFINITY;
  /** Job id -> end of its upload window. */
  private readonly awaiting = new Map<string, number>();
  private readonly finalizing = new Set<string>();
  /** Jobs whose upload is being received: they must not expire under the upload. */
  readonly uploading = new Set<string>();
  private work: Promise<void> = Promise.resolve();
  /** Uploads being turned into sending events, by job id: each runs beside the serial work. */
  private readonly processing = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly ctx: SandboxContext) {}

  /** Rebuilds the in-memory sets after a restart. */
  load(): void {
    const unprocessed: string[] = [];
    for (const job of this.ctx.store.iterate<JobRecord>('job')) {
      if (job.status === 'AWAITING_FILE_UPLOAD') this.trackAwaiting(job);
      if (job.status === 'PROCESSING' && job.upload && job.sendingEventCount === 0) unprocessed.push(job.id);
    }
    for (const jobId of unprocessed) {
      // Uploaded, answered, then the process stopped before all its events were written: finish
      // it now, after the last batch written (upload-processing.ts).
      this.ctx.log.info({ jobId }, 'resuming the processing of an uploaded file');
      this.processUploadLater(jobId);
    }
    for (const event of this.ctx.store.iterate<SendingEventRecord>('sending-event')) {
      if (!isFinalSendingEvent(event)) this.track(event);
    }
  }

  trackAwaiting(job: JobRecord): void {
    this.awaiting.set(
      job.id,
      job.uploadExpiresAt ? Date.parse(job.uploadExpiresAt) : Number.POSITIVE_INFINITY,
    );
  }

  /** The job has its file: it no longer waits to expire (each tick walks the waiting jobs). */
  untrackAwaiting(jobId: string): void {
    this.awaiting.delete(jobId);
  }

  isFinalizing(eventId: string): boolean {
    return this.finalizing.has(eventId);
  }

  /** Resolves once the background work started so far (proofs, upload processing) is written. */
  async idle(): Promise<void> {
    await Promise.all([this.work, ...this.processing.values()]);
  }

  private step(ms: number): number {
    return Math.max(1, Math.round(ms / this.ctx.settings.speed));
  }

  tick(): void {
    const now = this.ctx.clock.now();
    this.expireJobs(now);
    // Every request ticks: copying and walking every active event each time made a sandbox
    // holding 16,000 events answer at a quarter of its speed.
    if (this.earliestDue > now) return;
    this.earliestDue = Number.POSITIVE_INFINITY;
    for (const [id, { due }] of [...this.active]) {
      // A finalising event is looked at again when its finalisation ends (startFinalize).
      if (this.finalizing.has(id)) continue;
      if (due > now) {
        this.earliestDue = Math.min(this.earliestDue, due);
        continue;
      }
      const event = this.ctx.store.get<SendingEventRecord>('sending-event', id);
      if (!event || isFinalSendingEvent(event)) {
        this.untrack(id);
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
    this.track(event);
    if (changed) this.ctx.store.put('sending-event', event);
  }

  private track(event: SendingEventRecord): void {
    if (!this.active.has(event.id))
      this.unfinished.set(event.jobId, (this.unfinished.get(event.jobId) ?? 0) + 1);
    this.active.set(event.id, { due: event.nextTransitionAt, jobId: event.jobId });
    this.earliestDue = Math.min(this.earliestDue, event.nextTransitionAt);
  }

  /** The event is final (or gone): no longer looked at, no longer holding its job open. */
  private untrack(id: string): void {
    const entry = this.active.get(id);
    if (!entry) return;
    this.active.delete(id);
    const left = (this.unfinished.get(entry.jobId) ?? 1) - 1;
    if (left > 0) this.unfinished.set(entry.jobId, left);
    else this.unfinished.delete(entry.jobId);
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

  private startFinalize(id: string, at: number): void {
    this.finalizing.add(id);
    this.enqueue(
      () => this.finalize(id, at),
      { sendingEventId: id },
      'sending event finalisation failed',
    ).finally(() => {
      this.finalizing.delete(id);
      // Still active: the finalisation failed (or the sandbox is stopping), and a tick tries again.
      const entry = this.active.get(id);
      if (entry) this.earliestDue = Math.min(this.earliestDue, entry.due);
    });
  }

  /**
   * Serial background work (finalisations and their proofs); a failure is logged, never thrown.
   * Once the sandbox stops, what has not started is skipped: the events stay unfinished in the
   * store and are finalised after the next start (load()), and the stop waits for one task at most.
   */
  private enqueue(task: () => void, fields: Record<string, unknown>, message: string): Promise<void> {
    const run = this.work
      .then(() => {
        if (!this.stopping.signal.aborted) task();
      })
      .catch((err: unknown) => this.ctx.log.error({ err, ...fields }, message));
    this.work = run;
    return run;
  }

  /** Synchronous from the read to the write: no other writer can interleave. */
  private finalize(id: string, at: number): void {
    const event = this.ctx.store.get<SendingEventRecord>('sending-event', id);
    if (!event || isFinalSendingEvent(event)) return;
    const outcome = outcomeOf(event);
    const endedAt = isoTime(at);
    const rendered = renderOutcomeDocuments(event, outcome, endedAt);
    // One commit for the event, its proofs and its usage: a night's worth of events is not
    // three commits each.
    const newDocs = this.ctx.store.transaction(() => {
      const docs = applyOutcome(this.ctx, event, outcome, rendered, endedAt);
      this.setBusiness(event, outcome, at);
      this.ctx.store.put('sending-event', event);
      writeUsage(this.ctx, event, endedAt);
      return docs;
    });
    this.untrack(id);
    for (const doc of newDocs) this.emitFileReady(event, doc);
    this.ctx.log.info(
      { sendingEventId: id, jobId: event.jobId, businessStatus: outcome },
      'sending event final',
    );
    this.completeJobIfDone(event.jobId);
  }

  /**
   * Processes an uploaded file in the background, after `delayMs` (an injected fault), beside the
   * serial work: a big file read in a worker, then written in batches, holds up neither the
   * finalisations nor the other uploads. Stopping the sandbox abandons a delayed run and stops a
   * running one between batches; the next start picks the job up again (see load()).
   */
  processUploadLater(jobId: string, delayMs = 0): void {
    const run = () => {
      if (this.stopping.signal.aborted || this.processing.has(jobId)) return;
      const running = this.processUploadNow(jobId)
        .catch((err: unknown) => this.ctx.log.error({ err, jobId }, 'upload processing failed'))
        .finally(() => this.processing.delete(jobId));
      this.processing.set(jobId, running);
    };
    if (delayMs <= 0) {
      run();
      return;
    }
    sleep(delayMs, undefined, { signal: this.stopping.signal }).then(run, () => undefined);
  }

  private async processUploadNow(jobId: string): Promise<void> {
    const job = this.ctx.store.get<JobRecord>('job', jobId);
    if (!job) return;
    try {
      await processUpload(this.ctx, this, job, this.stopping.signal);
    } catch (err) {
      if (this.stopping.signal.aborted) {
        // The reader was closed under it: the job stays PROCESSING and resumes at the next start.
        this.ctx.log.info({ jobId }, 'upload processing stopped: it resumes at the next start');
        return;
      }
      const current = this.ctx.store.get<JobRecord>('job', jobId);
      // Events written already go on to their outcomes: the job stays PROCESSING and its
      // processing resumes from the last batch written at the next start.
      if ((current?.eventsCreated ?? 0) > 0) {
        this.ctx.log.error({ err, jobId }, 'upload processing failed: it resumes at the next start');
        return;
      }
      this.ctx.log.error({ err, jobId }, 'upload processing failed: job failed');
      if (current?.status !== 'PROCESSING' || current.sendingEventCount > 0) return;
      setJobStatus(this.ctx, current, 'FAILED', {
        errorList: [
          ...current.errorList,
          { code: 'PROCESSING_FAILED', message: 'the uploaded file could not be processed' },
        ],
      });
    }
  }

  /**
   * Abandons delayed work and stops upload processing between batches (the sandbox closes the
   * upload reader too); the finalisations already running finish (wait with idle()).
   */
  stop(): void {
    this.stopping.abort();
  }

  completeJobIfDone(jobId: string): void {
    // Every event not final is tracked (load(), createEvent): none of the job's left, it is done.
    if (this.unfinished.has(jobId)) return;
    const job = this.ctx.store.get<JobRecord>('job', jobId);
    // A job whose events are still being written (sendingEventCount not set yet) is not done.
    if (job?.status !== 'PROCESSING' || job.sendingEventCount === 0) return;
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
    // Deleting the current entry while iterating a Map is safe: no copy per tick.
    for (const [id, expiresAt] of this.awaiting) {
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
    const event = newSendingEvent(input, {
      id: this.ctx.newId('se'),
      now,
      nextTransitionAt: now + this.step(STEP_MS.scheduled),
    });
    this.ctx.store.insert('sending-event', event, { companyId: event.companyId, parentId: event.jobId });
    this.track(event);
    // No sending.event.file.ready for the original: that event announces generated files only.
    return event;
  }
}
