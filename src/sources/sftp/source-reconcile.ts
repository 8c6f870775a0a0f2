/**
 * Crash safety of an SFTP folder, as a pure decision: a remote file found in `.processing/` (or, on
 * a server that refuses RENAME, a complete file still in the drop folder) is matched to the journal
 * by its source URL, size and mtime (whole seconds: SFTP v3 has no finer times). Where each crash
 * point lands:
 *   - renamed into `.processing/`, not downloaded (or the download broke): no item, no local copy
 *     → download and take it again;
 *   - downloaded into the spool, not yet recorded: no item, local copy → leave it, the pipeline's
 *     recovery takes the local copy at start (and records it under the same source URL);
 *   - recorded, not final: the pipeline resumes it from the journal; its end triggers the remote move;
 *   - final in the journal, remote move not done (or half done): finish the move now.
 * A file is never submitted twice: a second take of the same content is caught by the journal's
 * SHA-256 duplicate check before any job exists, and a final item is never taken again.
 */
import type { JournalItem } from '../../journal/index.js';
import { isFinal } from '../../journal/states.js';
import type { RemoteEntry } from '../../sftp/types.js';

export type ReconcileDecision =
  | { action: 'finish'; item: JournalItem }
  | { action: 'leave'; why: 'in-pipeline' | 'local-copy' }
  | { action: 'take' };

/** Same file: same size and the same mtime to the second (the journal keeps the remote mtime). */
export function sameRemoteFile(item: JournalItem, entry: Pick<RemoteEntry, 'size' | 'mtimeMs'>): boolean {
  return (
    item.size === entry.size &&
    item.mtimeMs !== undefined &&
    Math.floor(item.mtimeMs / 1000) === Math.floor(entry.mtimeMs / 1000)
  );
}

/**
 * `newest`: the newest journal item recorded under this file's source URL, if any.
 * `localCopy`: the spool's `.processing/` already holds a file of this name.
 */
export function reconcile(
  entry: Pick<RemoteEntry, 'size' | 'mtimeMs'>,
  newest: JournalItem | undefined,
  localCopy: boolean,
): ReconcileDecision {
  if (newest && sameRemoteFile(newest, entry)) {
    return isFinal(newest.state)
      ? { action: 'finish', item: newest }
      : { action: 'leave', why: 'in-pipeline' };
  }
  if (localCopy) return { action: 'leave', why: 'local-copy' };
  return { action: 'take' };
}
