/**
 * Where a folder's claimed files live on this machine, and under which path the journal records
 * them: a local folder's own `.processing/`, or an SFTP folder's spool (its files recorded under
 * `sftp://user@host:port/path/<name>`, where they were dropped). Used by the pipeline's recovery.
 */
import path from 'node:path';
import type { FolderConfig } from '../../config/index.js';
import { sftpFolderUrl } from '../../config/sftp-source-schema.js';

export interface IntakePlace {
  /** The folder whose `.processing/` holds claimed files. */
  dir: string;
  originalPath(name: string): string;
}

export function intakeOf(folder: FolderConfig): IntakePlace {
  const source = folder.source;
  if (source.type === 'sftp') {
    const url = sftpFolderUrl(source);
    return { dir: source.spoolDir, originalPath: (name) => `${url}/${name}` };
  }
  return { dir: source.path, originalPath: (name) => path.join(source.path, name) };
}
