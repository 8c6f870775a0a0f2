/**
 * Fetches each enabled folder's workflow once (cached by id), checks it, and answers the folders
 * that may run and those stopped with their reason (code DOCEX_FOLDER_WORKFLOW).
 */
import path from 'node:path';
import { isApiError } from '../api/index.js';
import type { FolderConfig } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import { ensureRealDir } from '../core/real-dir.js';
import { makeSharedDir } from '../core/shared-dir.js';
import type { Workflow } from '../domain/wire.js';
import type { FolderRuntime } from '../pipeline/types.js';
import { PROCESSING_DIR } from '../sources/local/index.js';
import { checkFolderWorkflow } from './workflow-check.js';

export interface StoppedFolder {
  name: string;
  workflowId: string;
  code: string;
  reason: string;
}

export interface FolderPlan {
  running: Map<string, FolderRuntime>;
  stopped: StoppedFolder[];
}

export type WorkflowFetch = (workflowId: string, managedCompanyId?: string) => Promise<Workflow>;

export const FOLDER_WORKFLOW_CODE = 'DOCEX_FOLDER_WORKFLOW';

function fetchFailure(err: unknown, workflowId: string): string {
  if (isApiError(err) && err.status === 404) return `workflow ${workflowId} does not exist`;
  if (isApiError(err) && err.status === 403) return `workflow ${workflowId} may not be used by this account`;
  const code = isApiError(err) ? ` (${err.code})` : '';
  return `workflow ${workflowId} could not be fetched${code}: ${err instanceof Error ? err.message : String(err)}`;
}

export async function planFolders(
  folders: readonly FolderConfig[],
  fetchWorkflow: WorkflowFetch,
  log: Logger,
): Promise<FolderPlan> {
  const cache = new Map<string, Promise<Workflow>>();
  const running = new Map<string, FolderRuntime>();
  const stopped: StoppedFolder[] = [];
  for (const folder of folders) {
    if (!folder.enabled) continue;
    const key = `${folder.managedCompanyId ?? ''}/${folder.workflowId}`;
    let pending = cache.get(key);
    if (!pending) {
      pending = fetchWorkflow(folder.workflowId, folder.managedCompanyId);
      cache.set(key, pending);
    }
    let reason: string;
    try {
      const workflow = await pending;
      const check = checkFolderWorkflow(folder, workflow);
      if (check.ok) {
        running.set(folder.name, { config: folder, mode: check.mode, workflow });
        continue;
      }
      reason = check.reason;
    } catch (err) {
      reason = fetchFailure(err, folder.workflowId);
    }
    stopped.push({ name: folder.name, workflowId: folder.workflowId, code: FOLDER_WORKFLOW_CODE, reason });
    log.error(
      { folder: folder.name, workflowId: folder.workflowId, code: FOLDER_WORKFLOW_CODE, reason },
      'folder stopped',
    );
  }
  return { running, stopped };
}

/**
 * The drop, processing, archive and error folders (created when missing, as the ERP may not have
 * yet), each with its parent's group and group access (core/shared-dir.ts). Those the agent writes
 * into must be real directories: a symbolic link (a drop folder's `.error` replaced by whoever can
 * write there) throws DOCEX_FOLDER_UNSAFE. A local drop folder itself is the operator's choice and
 * may be a link.
 */
export async function ensureFolderDirs(folder: FolderConfig): Promise<void> {
  // An SFTP folder's drop folder is remote (its source creates what it needs there); its spool is local.
  let written: string[];
  if (folder.source.type === 'sftp') written = [folder.source.spoolDir];
  else {
    await makeSharedDir(folder.source.path);
    written = [path.join(folder.source.path, PROCESSING_DIR)];
  }
  for (const dir of [...written, folder.archiveDir, folder.errorDir]) await ensureRealDir(dir);
}
