/**
 * Start-up check of a folder's workflow: a workflow that is missing, disabled, not validated or of
 * an input source that does not fit the folder stops that folder with a clear message, before the
 * first file rather than at it. Pure: the caller fetches the workflow.
 */
import { type FolderConfig, type FolderMode, resolveFolderMode } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import type { Workflow } from '../domain/wire.js';

export type WorkflowCheck = { ok: true; mode: FolderMode } | { ok: false; reason: string };

export function checkFolderWorkflow(
  folder: Pick<FolderConfig, 'name' | 'workflowId' | 'mode'> & Partial<Pick<FolderConfig, 'sendAt'>>,
  workflow: Workflow,
): WorkflowCheck {
  const id = folder.workflowId;
  if (workflow.isDeleted) return { ok: false, reason: `workflow ${id} is deleted` };
  if (!workflow.enabled) return { ok: false, reason: `workflow ${id} is disabled; enable it in the portal` };
  if (!workflow.validated) {
    return { ok: false, reason: `workflow ${id} is not validated; validate it in the portal` };
  }
  try {
    const mode = resolveFolderMode(folder, workflow.inputSource.type);
    if (folder.sendAt && mode === 'single-file') {
      return {
        ok: false,
        reason: `folder ${folder.name}: sendAt is for payload folders (payload-pdf, payload-word); a single-file job carries no execution date (workflow ${id} takes single files)`,
      };
    }
    return { ok: true, mode };
  } catch (err) {
    if (isDocexError(err)) return { ok: false, reason: err.message };
    throw err;
  }
}
