/**
 * Crash safety of an SFTP folder, as a pure decision: a remote file found in `.processing/` (or, on
 * a server that refuses RENAME, a complete file still in the drop folder) is matched to the journal
 * by its source URL, size and mtime (whole seconds: SFTP v3 has no finer times). Where each crash
 * point lands:
 *   - renamed into `.processing/`, not downloaded (or the download broke): no item, no local copy
 *     → download it again;
 *   - downloaded into the spool, not yet recorded: no item, local copy → leave it, the pipeline's
 *     recovery takes the local copy at start (and records it under the same source URL);
 *   - recorded, not final: the pipeline resumes it from the journal; its end triggers the remote move;
 *     unless another agent recorded it and is gone (several agents, the file adopted from its claim
 *     folder): this copy is offered to the pipeline (downloaded first if need be), which takes the
 *     item over once no live agent holds it;
 *   - final in the journal, remote move not done (or half done): finish the move now.
 * A file is never submitted twice: a second claim of the same content is caught by the journal's
 * SHA-256 duplicate check before any job exists, and a final item is never taken again.
 */
import type { JournalItem } from '../../journal/index.js';
import { isFinal } from '../../journal/states.js';
import type { RemoteEntry } from '../../sftp/types.js';

export type ReconcileDecision =
  | { action: 'finish'; item: JournalItem }
  | { action: 'leave'; why: 'in-pipeline' | 'local-copy' }
  | { action: 'download' }
  /** The local copy is offered to the pipeline again (the item is another agent's, maybe gone). */
  | { action: 'offer' };

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
 * `holds`: whether this agent holds the item (always, when it is alone on its journal).
 */
export function reconcile(
  entry: Pick<RemoteEntry, 'size' | 'mtimeMs'>,
  newest: JournalItem | undefined,
  localCopy: boolean,
  holds: (item: JournalItem) => boolean = () => true,
): ReconcileDecision {
  if (newest && sameRemoteFile(newest, entry)) {
    if (isFinal(newest.state)) return { action: 'finish', item: newest };
    if (holds(newest)) return { action: 'leave', why: 'in-pipeline' };
    return localCopy ? { action: 'offer' } : { action: 'download' };
  }
  if (localCopy) return { action: 'leave', why: 'local-copy' };
  return { action: 'download' };
}
