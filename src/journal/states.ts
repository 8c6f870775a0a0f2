/**
 * The journal's pure core: the states an item (a claimed file, or one payload row of a file) moves
 * through, which moves are legal, and what to do with an unfinished item after a restart.
 * Plain values in, plain values out; each JournalStore (SQLite, PostgreSQL) enforces it durably.
 */

export const ITEM_STATES = [
  'claimed',
  'validated',
  'creating',
  'created',
  'uploaded',
  'done',
  'rejected',
] as const;
export type ItemState = (typeof ITEM_STATES)[number];

/** `file`: a claimed source file. `row`: one payload job cut from a file (a CSV row, a JSON payload). */
export type ItemKind = 'file' | 'row';

/** How the item's job is made: single-file and payload-pdf jobs need an upload, payload-word does not. */
export const ITEM_MODES = ['single-file', 'payload-pdf', 'payload-word'] as const;
export type ItemMode = (typeof ITEM_MODES)[number];

export const FINAL_STATES: ReadonlySet<ItemState> = new Set(['done', 'rejected']);

/** Every state but the final ones, as an SQL list (`'claimed', 'validated', …`) for read-only queries. */
export const UNFINISHED_STATES_SQL = ITEM_STATES.filter((state) => !FINAL_STATES.has(state))
  .map((state) => `'${state}'`)
  .join(', ');

/** Upload only while this much of the window is left; a big file over a slow line needs the time. */
export const DEFAULT_UPLOAD_MARGIN_MS = 10 * 60_000;

export function isFinal(state: ItemState): boolean {
  return FINAL_STATES.has(state);
}

export function needsUpload(mode: ItemMode): boolean {
  return mode !== 'payload-word';
}

/** What a move depends on besides the two states. */
export interface TransitionSubject {
  kind: ItemKind;
  mode: ItemMode;
  state: ItemState;
  /** States of the file's payload rows; empty or absent when the file is its own job. */
  childStates?: readonly ItemState[];
}

export type TransitionCheck = { ok: true } | { ok: false; reason: string };

/**
 * The moves of the job path, shared by files and rows. `creating -> creating` records a new intent
 * (a new attempt, a new job name); `created -> creating` recreates a job whose upload URL expired.
 */
const JOB_PATH: Readonly<Record<ItemState, readonly ItemState[]>> = {
  claimed: ['validated', 'rejected'],
  validated: ['creating', 'rejected'],
  creating: ['creating', 'created', 'rejected'],
  created: ['uploaded', 'done', 'creating', 'rejected'],
  uploaded: ['done'],
  done: [],
  rejected: [],
};

export function checkTransition(subject: TransitionSubject, to: ItemState): TransitionCheck {
  const { kind, mode, state: from } = subject;
  const children = subject.childStates ?? [];
  const refuse = (reason: string): TransitionCheck => ({ ok: false, reason });
  if (kind === 'row' && (from === 'claimed' || to === 'claimed')) {
    return refuse('a payload row starts validated and is never claimed');
  }
  if (children.length > 0) {
    // A file split into payload rows has no job of its own: it waits for its rows, then finishes.
    if (from !== 'validated') return refuse(`a file with payload rows cannot be in state ${from}`);
    if (to === 'rejected') return { ok: true };
    if (to !== 'done') return refuse('a file with payload rows goes from validated only to done or rejected');
    const open = children.filter((s) => !isFinal(s)).length;
    return open === 0 ? { ok: true } : refuse(`${open} payload row(s) are not finished`);
  }
  if (!JOB_PATH[from].includes(to)) return refuse(`${from} -> ${to} is not a legal move`);
  if (from === 'created' && to === 'uploaded' && !needsUpload(mode)) {
    return refuse(`a ${mode} job has no upload step`);
  }
  if (from === 'created' && to === 'done' && needsUpload(mode)) {
    return refuse(`a ${mode} job is done only after its upload is confirmed`);
  }
  return { ok: true };
}

/**
 * Whether a move must reach the disk before the agent acts on it (SQLite synchronous=FULL) or may
 * ride on the next durable commit (NORMAL: the WAL sits in the page cache, so a killed process
 * loses nothing; only a power cut can drop the tail of the WAL, and WAL order means a later FULL
 * commit makes every earlier one durable too). FULL for each move recorded right before an action
 * that must not be repeated blindly (FULL, or NORMAL and then JournalStore.commitMove's shared fsync
 * before the action starts):
 * - `created` before the PUT (with its job id a repeated upload gets a 409 and is checked);
 * - `uploaded` before the file goes to the archive, `rejected` before it goes to error/;
 * - `creating` of a job without upload (payload-word): its POST is the submission, so the intent
 *   and the name to find it by must be durable before it is sent.
 * NORMAL otherwise: losing a claim leaves the file in `.processing/`, which recovery takes again;
 * losing `validated` repeats a local check; losing an upload job's `creating` (no PUT happens
 * before the durable `created`) leaves at worst an orphan job that expires unused, as the lookup by
 * name already does; losing `done` repeats the archive step, which finds the file already moved.
 */
export function isDurableMove(to: ItemState, mode: ItemMode): boolean {
  if (to === 'creating') return !needsUpload(mode);
  return to === 'created' || to === 'uploaded' || to === 'rejected';
}

/** Every state an item of this kind can reach next, for docs and exhaustive tests. */
export function legalTargets(subject: TransitionSubject): ItemState[] {
  return ITEM_STATES.filter((to) => checkTransition(subject, to).ok);
}

/** What the recovery reads of an item: never the upload URL itself, only whether one is kept. */
export interface RecoverySubject extends TransitionSubject {
  jobId?: string | undefined;
  jobName?: string | undefined;
  attempt: number;
  uploadDeadline?: number | undefined;
  hasUploadUrl: boolean;
}

export type RecoveryAction =
  /** Re-check the claimed file (hash, size, mtime) and validate it again; no job was asked for. */
  | { kind: 'validate' }
  /** Validated, no request sent yet: create the job (the intent is recorded first, as always). */
  | { kind: 'create' }
  /** A create request may have reached the service: find the job by name before creating again. */
  | { kind: 'lookup-then-create'; jobName: string }
  /** The job waits for its file and the URL is still good: upload (re-hash the file first). */
  | { kind: 'upload'; jobId: string; msLeft: number }
  /** The upload window is (nearly) over or the URL is gone: record a new intent and create again. */
  | { kind: 'recreate'; previousJobId: string | undefined; why: 'expired' | 'near-deadline' | 'no-url' }
  /** The file's payload rows are still running: each row has its own action. */
  | { kind: 'resume-rows'; pending: number }
  /** The service has it: move the file to its done folder and mark the item done. */
  | { kind: 'finish' }
  /** Already final. */
  | { kind: 'none' };

export interface RecoveryOptions {
  marginMs?: number;
}

/** What to do with an item found unfinished on start-up. */
export function recoveryAction(
  item: RecoverySubject,
  now: number,
  options: RecoveryOptions = {},
): RecoveryAction {
  const margin = options.marginMs ?? DEFAULT_UPLOAD_MARGIN_MS;
  const children = item.childStates ?? [];
  switch (item.state) {
    case 'done':
    case 'rejected':
      return { kind: 'none' };
    case 'claimed':
      return { kind: 'validate' };
    case 'validated': {
      if (children.length > 0) {
        const pending = children.filter((s) => !isFinal(s)).length;
        return pending > 0 ? { kind: 'resume-rows', pending } : { kind: 'finish' };
      }
      // A payload file whose rows were never recorded is split again; addRows is one transaction.
      if (item.kind === 'file' && item.mode !== 'single-file') return { kind: 'validate' };
      return { kind: 'create' };
    }
    case 'creating':
      return item.jobName
        ? { kind: 'lookup-then-create', jobName: item.jobName }
        : { kind: 'recreate', previousJobId: item.jobId, why: 'no-url' };
    case 'created': {
      if (!needsUpload(item.mode)) return { kind: 'finish' };
      if (!item.hasUploadUrl || item.uploadDeadline === undefined || item.jobId === undefined) {
        return { kind: 'recreate', previousJobId: item.jobId, why: 'no-url' };
      }
      const msLeft = item.uploadDeadline - now;
      if (msLeft <= 0) return { kind: 'recreate', previousJobId: item.jobId, why: 'expired' };
      if (msLeft <= margin) return { kind: 'recreate', previousJobId: item.jobId, why: 'near-deadline' };
      return { kind: 'upload', jobId: item.jobId, msLeft };
    }
    case 'uploaded':
      return { kind: 'finish' };
  }
}

/** The identity of the file recorded at claim. */
export interface FileIdentity {
  size: number;
  mtimeMs: number;
  sha256?: string | undefined;
}

export type ChangeCheck = { changed: false } | { changed: true; what: 'size' | 'mtime' | 'content' };

/**
 * A file that changed after its claim is rejected, never half-sent. Size and mtime are cheap and
 * checked first; the hash (when the caller computed one) settles the rest.
 */
export function fileChange(recorded: FileIdentity, observed: FileIdentity): ChangeCheck {
  if (recorded.size !== observed.size) return { changed: true, what: 'size' };
  if (Math.trunc(recorded.mtimeMs) !== Math.trunc(observed.mtimeMs)) return { changed: true, what: 'mtime' };
  if (observed.sha256 !== undefined && recorded.sha256 !== observed.sha256) {
    return { changed: true, what: 'content' };
  }
  return { changed: false };
}
