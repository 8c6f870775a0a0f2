import { createHash } from 'node:crypto';

/**
 * Deterministic job names: the only handle the agent has on a job whose create answer was lost in a
 * crash. The name is readable (the file name first) and ends in a fixed-shape tag that carries the
 * first 12 hex chars of the file's SHA-256, a short hash of the folder (same file in two folders,
 * two names), the payload row and the attempt, so it can be parsed back and matched exactly.
 */

export const MAX_JOB_NAME_LENGTH = 100;

export interface JobNameInput {
  /** The configured folder's id (its name or path), hashed into the tag. */
  folder: string;
  fileName: string;
  sha256: string;
  /** 0-based index of a payload row inside its file. */
  rowIndex?: number | undefined;
  /** 1 for the first create; a recreate after an expired upload window counts up. */
  attempt?: number | undefined;
}

export interface ParsedJobName {
  stem: string;
  sha12: string;
  folderTag: string;
  rowIndex: number | undefined;
  attempt: number;
}

const TAG = /\.dx-([0-9a-f]{12})-([0-9a-f]{6})(?:-r(\d{1,9}))?(?:-a(\d{1,6}))?$/;

export function folderTag(folder: string): string {
  return createHash('sha256').update(folder, 'utf8').digest('hex').slice(0, 6);
}

/** Letters, digits, dot, dash and underscore only; accents dropped, anything else becomes a dash. */
export function safeStem(fileName: string): string {
  const ascii = fileName.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
  const safe = ascii
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/-+\./g, '.')
    .replace(/^[-.]+|[-.]+$/g, '');
  return safe.length > 0 ? safe : 'file';
}

export function deterministicJobName(input: JobNameInput): string {
  const sha = input.sha256.toLowerCase();
  if (!/^[0-9a-f]{12,}$/.test(sha)) throw new RangeError('sha256 must be hex');
  const attempt = input.attempt ?? 1;
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > 999_999)
    throw new RangeError('attempt out of range');
  const row = input.rowIndex;
  if (row !== undefined && (!Number.isInteger(row) || row < 0 || row > 999_999_999)) {
    throw new RangeError('rowIndex out of range');
  }
  const tag =
    `.dx-${sha.slice(0, 12)}-${folderTag(input.folder)}` +
    (row === undefined ? '' : `-r${row}`) +
    (attempt > 1 ? `-a${attempt}` : '');
  const stem = safeStem(input.fileName)
    .slice(0, MAX_JOB_NAME_LENGTH - tag.length)
    .replace(/[-.]+$/, '');
  return `${stem.length > 0 ? stem : 'file'}${tag}`;
}

/** The parts of a name made by deterministicJobName, or undefined for any other name. */
export function parseJobName(name: string): ParsedJobName | undefined {
  if (name.length > MAX_JOB_NAME_LENGTH) return undefined;
  const match = TAG.exec(name);
  if (!match) return undefined;
  const stem = name.slice(0, match.index);
  if (stem.length === 0 || !/^[A-Za-z0-9._-]+$/.test(stem)) return undefined;
  return {
    stem,
    sha12: match[1]!,
    folderTag: match[2]!,
    rowIndex: match[3] === undefined ? undefined : Number(match[3]),
    attempt: match[4] === undefined ? 1 : Number(match[4]),
  };
}

/** Does this name belong to that file (and row)? Any attempt matches. */
export function jobNameMatches(name: string, input: Omit<JobNameInput, 'attempt'>): boolean {
  const parsed = parseJobName(name);
  return (
    parsed !== undefined &&
    parsed.sha12 === input.sha256.toLowerCase().slice(0, 12) &&
    parsed.folderTag === folderTag(input.folder) &&
    parsed.rowIndex === input.rowIndex
  );
}
