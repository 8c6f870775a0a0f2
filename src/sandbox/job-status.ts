import { isoTime } from '../core/clock.js';
import { firesJobWebhook, jobStatusName } from '../domain/names-profile.js';
import type { SandboxContext } from './context.js';
import type { JobRecord, JobStatus } from './records.js';

/** Moves a job to a new status and tells the webhooks (under `reference`, final statuses only). */
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
    const names = ctx.settings.names;
    if (firesJobWebhook(status, names)) {
      ctx.emit({
        type: 'job.status.changed',
        companyId: job.companyId,
        data: {
          jobId: job.id,
          status: jobStatusName(status, names),
          previousStatus: jobStatusName(previousStatus, names),
        },
      });
    }
  }
  return updated;
}
