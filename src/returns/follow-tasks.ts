/**
 * The two kinds of work the follower runs: one poll of a job, one document to fetch. A failure is
 * logged with its code and the work is scheduled again (the job's backoff, the document's retry
 * time; a download failing past the retry policy's limit is parked); a stop (abort) leaves the
 * store as it was, to be resumed at the next start.
 */
import type { CallOptions } from '../api/index.js';
import { isDocexError } from '../core/errors.js';
import { nextTry, stepFailure } from '../domain/retry-policy.js';
import type { CallGate } from './call-gate.js';
import { pollInterval, retryAt } from './follow-plan.js';
import { type PollDeps, pollJob } from './poll-job.js';
import { fetchDocument, type ProofDeps } from './proofs.js';
import type { DocumentRow, JobRow } from './store.js';

/** Where downloads in progress live; what a killed process left there is never complete. */
export const RETURNS_TEMP_DIR = 'returns-tmp';

/** One piece of work; `gate`: where its calls wait (absent: the context's). */
export type Task = { key: string; run: (gate?: CallGate) => Promise<void> };

export interface TaskContext {
  poll: PollDeps;
  proofs: ProofDeps;
  /**
   * Call options of a job of this source (its file item's managed company, recorded at the claim,
   * else its folder's; the stop signal).
   */
  options(source: { folder: string; itemId: number } | undefined): Promise<CallOptions>;
  aborted(): boolean;
}

export const jobKey = (jobId: string): string => `job:${jobId}`;
export const documentKey = (doc: Pick<DocumentRow, 'sendingEventId' | 'fileReference'>): string =>
  `doc:${doc.sendingEventId}:${doc.fileReference}`;

/** The poll of a job, undefined when the job or its file is not in the store; `known`: its row, just read. */
export async function jobTask(shared: TaskContext, jobId: string, known?: JobRow): Promise<Task | undefined> {
  const { store, log, config, now } = shared.poll;
  const row = known ?? (await store.job(jobId));
  if (!row) return undefined;
  const source = await store.source(row.sourceId);
  if (!source) return undefined;
  return {
    key: jobKey(jobId),
    run: async (gate = shared.poll.gate) => {
      try {
        await pollJob({ ...shared.poll, gate }, row, source, await shared.options(source));
      } catch (err) {
        if (shared.aborted()) return;
        await store.deferJob(jobId, now() + pollInterval(row.unchangedPolls + 1, false, config.follow));
        log.warn(
          {
            folder: source.folder,
            file: source.fileName,
            jobId,
            err,
            code: isDocexError(err) ? err.code : undefined,
          },
          'job poll failed: tried again later',
        );
      }
    },
  };
}

export function documentTask(shared: TaskContext, doc: DocumentRow): Task {
  const { store, log } = shared.proofs;
  return {
    key: documentKey(doc),
    run: async (gate = shared.proofs.gate) => {
      const job = await store.job(doc.jobId);
      const source = job ? await store.source(job.sourceId) : undefined;
      const fields = { folder: source?.folder, file: source?.fileName, jobId: doc.jobId };
      try {
        await fetchDocument({ ...shared.proofs, gate }, doc, fields, await shared.options(source));
      } catch (err) {
        if (shared.aborted()) return;
        const failure = stepFailure(err);
        const tries = doc.failures + 1;
        const { follow } = shared.poll.config;
        // The return path's own waits (its poll intervals); the limits are the policy's.
        const next = nextTry(failure, tries, (n) => retryAt(0, n, follow));
        const logged = {
          ...fields,
          sendingEventId: doc.sendingEventId,
          documentType: doc.type,
          code: failure.code,
        };
        if (next.kind === 'park') {
          await store.markDocumentParked(doc, `${failure.code}: ${next.reason}`);
          log.error(
            { ...logged, reason: next.reason },
            'proof download parked: fix the cause, then run `docex-agent returns retry`',
          );
          return;
        }
        await store.markDocumentFailed(doc, failure.code, shared.proofs.now() + next.delayMs);
        log.warn({ ...logged, err, try: tries }, 'proof download failed: tried again later');
      }
    },
  };
}
