/**
 * PostgreSQL's applyMove (../moves.ts runs SQLite statements): the update one already-checked move
 * makes, and the history detail it records. The details are SQLite's, key for key: only non-secret
 * fields (never the upload URL), any URL in free text without its query.
 */
import { deterministicJobName, type JobNameInput } from '../job-name.js';
import { fieldsError } from '../moves.js';
import { stripUrlQueries } from '../redact.js';
import type { JournalItem } from '../schema.js';
import { type ItemState, needsUpload } from '../states.js';
import type { TransitionFields } from '../types.js';
import type { Statement } from './pool.js';
import { STATEMENTS as S } from './statements.js';

export interface PlannedMove {
  statement: Statement;
  values: unknown[];
  detail: Record<string, unknown>;
}

export function planMove(current: JournalItem, to: ItemState, f: TransitionFields, now: number): PlannedMove {
  const id = current.id;
  const base = f.note ? { note: stripUrlQueries(f.note) } : {};
  // A lost create answer is counted in the move's own update (TransitionFields.lostAnswer).
  const lost = f.lostAnswer ? 1 : 0;
  const orphan = f.lostAnswer === 'orphan' ? 1 : 0;
  switch (to) {
    case 'creating': {
      // The intent (and the name to find the job by) is durable before the request is sent.
      const attempt = current.attempt + 1;
      const jobName = deterministicJobName({ ...current, attempt });
      return {
        statement: S.setCreating,
        values: [id, attempt, jobName, now, lost, orphan],
        detail: { ...base, attempt, jobName, ...(current.jobId ? { previousJobId: current.jobId } : {}) },
      };
    }
    case 'created': {
      if (!f.jobId) throw fieldsError(id, to, 'jobId');
      const upload = needsUpload(current.mode);
      if (upload && (!f.uploadUrl || f.uploadDeadline === undefined)) {
        throw fieldsError(id, to, 'uploadUrl and uploadDeadline');
      }
      const deadline = upload ? f.uploadDeadline! : null;
      const shown = deadline === null ? {} : { uploadDeadline: new Date(deadline).toISOString() };
      return {
        statement: S.setCreated,
        values: [id, f.jobId, upload ? f.uploadUrl : null, deadline, now, lost, orphan],
        detail: { ...base, jobId: f.jobId, ...shown },
      };
    }
    case 'uploaded':
      if (!f.md5) throw fieldsError(id, to, 'md5');
      return {
        statement: S.setUploaded,
        values: [id, f.md5, now, lost, orphan],
        detail: { ...base, jobId: current.jobId, md5: f.md5 },
      };
    case 'rejected': {
      if (!f.code) throw fieldsError(id, to, 'code');
      const reason = stripUrlQueries(f.reason ?? f.code);
      return {
        statement: S.setRejected,
        values: [id, f.code, reason, now, lost, orphan],
        detail: { ...base, code: f.code, reason },
      };
    }
    default:
      return {
        statement: S.setState,
        values: [id, to, now, lost, orphan],
        detail: { ...base, ...(to === 'done' && current.jobId ? { jobId: current.jobId } : {}) },
      };
  }
}

/** One history entry of the moves a claim makes on the file it inserts. */
export interface ClaimMove {
  from: ItemState | null;
  to: ItemState;
  detail: Record<string, unknown>;
}

/** The create intent of a file's first job: what planMove's 'creating' sets on a new file. */
export function firstCreate(file: Pick<JobNameInput, 'folder' | 'fileName' | 'sha256'>): {
  attempt: number;
  jobName: string;
} {
  return { attempt: 1, jobName: deterministicJobName({ ...file, attempt: 1 }) };
}

/** A claimed file validated and on to its create intent, as planMove records both moves. */
export function validatedToCreating(note: string, create: { attempt: number; jobName: string }): ClaimMove[] {
  return [
    { from: 'claimed', to: 'validated', detail: note ? { note: stripUrlQueries(note) } : {} },
    { from: 'validated', to: 'creating', detail: { ...create } },
  ];
}

/** A detail as SQLite stores it: JSON text, or NULL for an empty one. */
export function detailText(detail: object): string | null {
  return Object.keys(detail).length > 0 ? JSON.stringify(detail) : null;
}
