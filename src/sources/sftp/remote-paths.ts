/**
 * Remote paths are POSIX whatever the agent's OS; remote archive folders are numbered and dated like
 * the local ones.
 */
import path from 'node:path';

export const REMOTE_PROCESSING_DIR = '.processing';

export const remoteJoin = (...parts: string[]): string => path.posix.join(...parts);

/** `invoice.pdf`, 2 → `invoice.2.pdf` (same numbering as local archive folders). */
export function numberedRemoteName(name: string, n: number): string {
  const ext = path.posix.extname(name);
  const stem = ext.length > 0 && ext.length < name.length ? name.slice(0, -ext.length) : name;
  return `${stem}.${n}${ext.length < name.length ? ext : ''}`;
}

/** `YYYY-MM-DD` of `ms` in UTC, like the local archive's day folders. */
export function dayFolder(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
