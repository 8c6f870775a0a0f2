/**
 * The job path shared by single-file items and payload-pdf rows: record the intent, create the
 * job, record its id and URL, re-check the file, stream it up, record the upload. Every step starts
 * from the journal, so the same code resumes after a crash. Errors go through classifyFailure (one
 * place decides reject / recreate / check the job / retry later).
 */

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { isApiError, type JobCreated } from '../api/index.js';
import { crashPoint } from '../core/crash-points.js';
import type { ErrorCode } from '../core/error-codes.js';
import { normaliseJobStatus } from '../domain/wire.js';
import { fileChange, type JournalItem, recoveryAction } from '../journal/index.js';
import { callOptions, itemLog } from './call-options.js';
import { inCallSlot } from './call-slots.js';
import type { RejectionExtras } from './finish.js';
import { classifyFailure } from './retry-policy.js';
import { recordIntent, type SendAllowance, type SendOutcome, sendOnce } from './send-gate.js';
import { checkSendWindow } from './send-windows.js';
import { type FolderRuntime, RetryLater, type StepContext } from './types.js';

/** Create intents per item at most: an upload window missed this often means something else is wrong. */
export const MAX_ATTEMPTS = 5;
/**
 * Lost create answers per item at most. Each leaves an unused job that expires, and a new attempt
 * follows; they are the network's failures, not the file's, so they have a bound of their own.
 */
export const MAX_UNANSWERED_CREATES = 20;
const DEFAULT_WINDOW_MS = 2 * 3_600_000;

/** What a job is made from and what its upload sends. */
export interface JobTarget {
  /** The file uploaded to the job (the item's own, or a payload row's parent file). */
  filePath: string;
  /** Size and mtime recorded at claim; a file that differs is rejected, never half-sent. */
  size: number | undefined;
  mtimeMs: number | undefined;
  /**
   * SHA-256 recorded at claim: a streamed upload sends its last byte only once the bytes read
   * prove to be these (the journal and duplicate checks name the file by it).
   */
  sha256?: string | undefined;
  /** The file's bytes as read at its claim (a small file, this run): uploaded from memory. */
  bytes?: Buffer | undefined;
  /** The create request; `jobName` is the journal's deterministic name, `allowance` the send gate's. */
  create(jobName: string | undefined, allowance: SendAllowance): Promise<JobCreated>;
  /** Records (and for files, places) a rejection. */
  reject(item: JournalItem, code: ErrorCode, reason: string, extras?: RejectionExtras): Promise<JournalItem>;
}

async function md5Of(filePath: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A new intent (new job name). Rejected once MAX_ATTEMPTS were spent on upload windows, or
 * MAX_UNANSWERED_CREATES on lost create answers (`unanswered`: this attempt follows one, whose
 * job is an orphan; the journal counts it in the same move).
 */
async function newAttempt(
  ctx: StepContext,
  item: JournalItem,
  note: string,
  unanswered = false,
): Promise<JournalItem> {
  const lost = item.orphanJobs + (unanswered ? 1 : 0);
  if (unanswered && lost >= MAX_UNANSWERED_CREATES) {
    return ctx.journal.transition(item.id, 'rejected', {
      code: 'DOCEX_CREATE_UNANSWERED',
      reason: `the answers to ${lost} job creates were lost; their jobs expire unused`,
      lostAnswer: 'orphan',
    });
  }
  if (!unanswered && item.attempt - lost >= MAX_ATTEMPTS) {
    return ctx.journal.transition(item.id, 'rejected', {
      code: 'DOCEX_UPLOAD_WINDOW',
      reason: `no upload succeeded in ${item.attempt - lost} job attempts`,
    });
  }
  return recordIntent(ctx, item.id, note, unanswered ? { lostAnswer: 'orphan' } : {});
}

/**
 * `creating` → `created`: the create, through the send gate. A job found by name instead (the
 * answer of an earlier send was lost) cannot be uploaded to: its URL was in that answer and the
 * interface hands out no new one, so a new attempt is recorded and the orphan expires unused.
 */
async function createJob(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  target: JobTarget,
): Promise<JournalItem> {
  let outcome: SendOutcome<JobCreated>;
  try {
    outcome = await sendOnce(ctx, runtime, item, (jobName, allowance) => target.create(jobName, allowance));
  } catch (err) {
    if (err instanceof RetryLater) throw err;
    const failure = classifyFailure(err, 'create');
    if (failure.kind === 'reject') {
      return target.reject(
        item,
        failure.code,
        failure.reason,
        failure.details ? { details: failure.details } : {},
      );
    }
    throw new RetryLater(failure.code, failure.reason);
  }
  if (outcome.kind === 'found') {
    ctx.log.warn(
      { folder: item.folder, file: item.fileName, jobId: outcome.job.id, status: outcome.job.status },
      'job found by name without its upload URL; creating a new attempt',
    );
    return newAttempt(ctx, item, `orphan job ${outcome.job.id}: its create answer was lost`, true);
  }
  const created = outcome.answer;
  const deadline = created.uploadExpiresAt ? Date.parse(created.uploadExpiresAt) : Number.NaN;
  // On disk before the PUT: with the job id, a repeated upload is answered 409 and checked.
  const next = await ctx.journal.commitMove(item.id, 'created', {
    jobId: created.id,
    uploadUrl: created.fileUploadUrl,
    uploadDeadline: Number.isFinite(deadline) ? deadline : ctx.clock.now() + DEFAULT_WINDOW_MS,
  });
  crashPoint('after-created');
  ctx.log.info(
    { folder: item.folder, file: item.fileName, jobId: created.id, attempt: next.attempt },
    'job created',
  );
  return next;
}

/** 409 or a maybe-landed retry: the job's status says whether the service has the file. */
async function checkJob(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  target: JobTarget,
): Promise<JournalItem> {
  let status: string;
  try {
    const job = await inCallSlot(ctx, runtime, item, () =>
      ctx.jobs.get(item.jobId!, callOptions(ctx, runtime, item)),
    );
    status = normaliseJobStatus(job.status);
  } catch (err) {
    if (isApiError(err) && err.status === 404) return newAttempt(ctx, item, 'job gone (window over)');
    const outcome = classifyFailure(err, 'upload');
    throw new RetryLater(outcome.code, outcome.reason);
  }
  if (status === 'AWAITING_FILE_UPLOAD') {
    throw new RetryLater('DOCEX_UPLOAD_PENDING', 'the job still awaits its file');
  }
  ctx.log.info(
    { folder: item.folder, file: item.fileName, jobId: item.jobId, status },
    'upload confirmed by job status',
  );
  const md5 = await md5Of(target.filePath);
  return ctx.journal.commitMove(item.id, 'uploaded', {
    md5,
    note: `job status ${status}`,
  });
}

/** `created` → `uploaded`: re-check the file, stream it to the pre-signed URL. */
async function uploadJob(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  target: JobTarget,
): Promise<JournalItem> {
  const action = recoveryAction(item, ctx.clock.now(), { marginMs: ctx.uploadMarginMs });
  if (action.kind === 'recreate') return newAttempt(ctx, item, `recreate: ${action.why}`);
  const st = await fs.stat(target.filePath).catch(() => undefined);
  const change = st
    ? fileChange(
        { size: target.size ?? -1, mtimeMs: target.mtimeMs ?? -1 },
        { size: st.size, mtimeMs: st.mtimeMs },
      )
    : ({ changed: true, what: 'size' } as const);
  if (change.changed) {
    return target.reject(item, 'DOCEX_SOURCE_CHANGED', `the file changed before its upload (${change.what})`);
  }
  const url = await ctx.journal.revealUploadUrl(item.id);
  if (!url) return newAttempt(ctx, item, 'recreate: no-url');
  try {
    const result = await inCallSlot(ctx, runtime, item, () =>
      ctx.jobs.uploadFile(url, target.filePath, {
        signal: ctx.signal,
        log: itemLog(ctx, item),
        ...(ctx.onUploadProgress ? { onProgress: ctx.onUploadProgress } : {}),
        // The stat above matched the claim, whose bytes these are.
        ...(target.bytes && st ? { content: { bytes: target.bytes, mtimeMs: st.mtimeMs } } : {}),
        ...(target.sha256 === undefined ? {} : { expectSha256: target.sha256 }),
      }),
    );
    // On disk before the file moves to the archive.
    crashPoint('after-upload');
    const next = await ctx.journal.commitMove(item.id, 'uploaded', { md5: result.md5 });
    ctx.log.info(
      { folder: item.folder, file: item.fileName, jobId: item.jobId, size: result.size },
      'uploaded',
    );
    return next;
  } catch (err) {
    const outcome = classifyFailure(err, 'upload');
    switch (outcome.kind) {
      case 'reject':
        return target.reject(
          item,
          outcome.code,
          outcome.reason,
          outcome.details ? { details: outcome.details } : {},
        );
      case 'recreate':
        return newAttempt(ctx, item, `recreate: ${outcome.code}`);
      case 'check-job':
        return checkJob(ctx, runtime, item, target);
      default:
        throw new RetryLater(outcome.code, outcome.reason);
    }
  }
}

/**
 * From `validated`, `creating` or `created` to `uploaded` (or `rejected`); throws RetryLater when
 * the item must wait (its state stays in the journal).
 */
export async function runJobSteps(
  ctx: StepContext,
  runtime: FolderRuntime,
  start: JournalItem,
  target: JobTarget,
): Promise<JournalItem> {
  let item = start;
  for (let steps = 0; steps < 4 * (MAX_ATTEMPTS + MAX_UNANSWERED_CREATES) + 4; steps++) {
    if (ctx.signal.aborted) throw new RetryLater('DOCEX_STOPPING', 'the agent is stopping');
    switch (item.state) {
      case 'validated':
        checkSendWindow(ctx, runtime);
        item = await recordIntent(ctx, item.id);
        break;
      case 'creating':
        checkSendWindow(ctx, runtime);
        item = await createJob(ctx, runtime, item, target);
        break;
      case 'created':
        item = await uploadJob(ctx, runtime, item, target);
        break;
      default:
        return item;
    }
  }
  throw new RetryLater('DOCEX_INTERNAL', 'the item did not reach the upload');
}
