import { DocexError } from '../core/errors.js';
import { deterministicJobName } from './job-name.js';
import { stripUrlQueries } from './redact.js';
import type { JournalItem } from './schema.js';
import type { Statements } from './statements.js';
import { type ItemState, needsUpload } from './states.js';
import type { TransitionFields } from './types.js';

/**
 * Writes one already-checked move to the item row and answers the history detail. The detail holds
 * only non-secret fields: never the upload URL, and any URL in free text loses its query.
 */
export function applyMove(
  stmts: Statements,
  current: JournalItem,
  to: ItemState,
  f: TransitionFields,
  now: number,
): Record<string, unknown> {
  const id = current.id;
  const base = f.note ? { note: stripUrlQueries(f.note) } : {};
  if (f.lostAnswer) stmts.countLostAnswer.run({ id, orphan: f.lostAnswer === 'orphan' ? 1 : 0 });
  switch (to) {
    case 'creating': {
      // The intent (and the name to find the job by) is durable before the request is sent.
      const attempt = current.attempt + 1;
      const jobName = deterministicJobName({ ...current, attempt });
      stmts.setCreating.run({ id, attempt, jobName, now });
      return { ...base, attempt, jobName, ...(current.jobId ? { previousJobId: current.jobId } : {}) };
    }
    case 'created': {
      if (!f.jobId) throw fieldsError(id, to, 'jobId');
      const upload = needsUpload(current.mode);
      if (upload && (!f.uploadUrl || f.uploadDeadline === undefined)) {
        throw fieldsError(id, to, 'uploadUrl and uploadDeadline');
      }
      const deadline = upload ? f.uploadDeadline! : null;
      stmts.setCreated.run({ id, jobId: f.jobId, url: upload ? f.uploadUrl : null, deadline, now });
      const shown = deadline === null ? {} : { uploadDeadline: new Date(deadline).toISOString() };
      return { ...base, jobId: f.jobId, ...shown };
    }
    case 'uploaded':
      if (!f.md5) throw fieldsError(id, to, 'md5');
      stmts.setUploaded.run({ id, md5: f.md5, now });
      return { ...base, jobId: current.jobId, md5: f.md5 };
    case 'rejected': {
      if (!f.code) throw fieldsError(id, to, 'code');
      const reason = stripUrlQueries(f.reason ?? f.code);
      stmts.setRejected.run({ id, code: f.code, reason, now });
      return { ...base, code: f.code, reason };
    }
    default:
      stmts.setState.run({ id, state: to, now });
      return { ...base, ...(to === 'done' && current.jobId ? { jobId: current.jobId } : {}) };
  }
}

export function duplicateReason(earlier: JournalItem): string {
  const job = earlier.jobId ? ` (job ${earlier.jobId})` : '';
  return (
    `the same content (SHA-256 ${earlier.sha256.slice(0, 12)}…) was already taken as ${earlier.fileName}${job}` +
    '; set allowDuplicates on the folder to send it again'
  );
}

export function fieldsError(itemId: number, to: ItemState, needed: string): DocexError {
  return new DocexError('DOCEX_JOURNAL_FIELDS', `item ${itemId}: moving to ${to} needs ${needed}`, {
    details: { itemId, to },
  });
}

export function rowsError(itemId: number, message: string): DocexError {
  return new DocexError('DOCEX_JOURNAL_ROWS', message, { details: { itemId } });
}
