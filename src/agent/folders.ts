/**
 * Fetches each enabled folder's workflow once (cached by id), checks it, and answers the folders
 * that may run and those stopped with their reason (code DOCEX_FOLDER_WORKFLOW). A folder with
 * routes has the workflow of each route checked too (as each company it can be sent as; a
 * `{company}` route's, each company's own workflow): each must pass as the folder's does and fit
 * the route's mode (its own, or the folder's).
 */
import fs from 'node:fs/promises';
import { isApiError } from '../api/index.js';
import type { FolderConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { ensureRealDir } from '../core/real-dir.js';
import { makeSharedDir } from '../core/shared-dir.js';
import type { Workflow } from '../domain/wire.js';
import { compileRoutes, type RouteTarget } from '../pipeline/routes.js';
import type { FolderRuntime } from '../pipeline/types.js';
import { missingDropFolder } from '../sources/drop-folder.js';
import { kindOf } from '../sources/kinds.js';
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

function fetchFailure(err: unknown, workflowId: string, managedCompanyId?: string): string {
  if (isApiError(err) && err.status === 404) return `workflow ${workflowId} does not exist`;
  if (isApiError(err) && err.status === 403 && managedCompanyId) {
    return `workflow ${workflowId} was refused as managed company ${managedCompanyId} (403): the credentials may not act for that company, or the workflow is not its to use`;
  }
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
  const fetchOnce = (target: RouteTarget) => {
    const key = `${target.managedCompanyId ?? ''}/${target.workflowId}`;
    let pending = cache.get(key);
    if (!pending) {
      pending = fetchWorkflow(target.workflowId, target.managedCompanyId);
      // Answered (or refused) where it is awaited.
      pending.catch(() => undefined);
      cache.set(key, pending);
    }
    return pending;
  };
  const running = new Map<string, FolderRuntime>();
  const stopped: StoppedFolder[] = [];
  for (const folder of folders) {
    if (!folder.enabled) continue;
    let reason: string;
    try {
      const workflow = await fetchOnce({
        workflowId: folder.workflowId,
        managedCompanyId: folder.managedCompanyId,
      });
      // sendAt is for payload jobs: a single-file folder may have them through its payload-word routes.
      const payloadRoutes = folder.routes?.some((r) => r.mode === 'payload-word') ?? false;
      const check = checkFolderWorkflow(payloadRoutes ? { ...folder, sendAt: undefined } : folder, workflow);
      if (check.ok) {
        const routed = await routeWorkflows(folder, check.mode, fetchOnce);
        if (routed.ok) {
          running.set(folder.name, {
            config: folder,
            mode: check.mode,
            workflow,
            ...(folder.routes ? { workflows: routed.workflows } : {}),
          });
          continue;
        }
        reason = routed.reason;
      } else {
        reason = check.reason;
      }
    } catch (err) {
      reason = fetchFailure(err, folder.workflowId, folder.managedCompanyId);
    }
    stopped.push({ name: folder.name, workflowId: folder.workflowId, code: FOLDER_WORKFLOW_CODE, reason });
    log.error(
      { folder: folder.name, workflowId: folder.workflowId, code: FOLDER_WORKFLOW_CODE, reason },
      'folder stopped',
    );
  }
  return { running, stopped };
}

/** Each route's workflow, as each company it may be sent as, checked as the folder's is and of the route's mode. */
async function routeWorkflows(
  folder: FolderConfig,
  mode: FolderRuntime['mode'],
  fetchOnce: (target: RouteTarget) => Promise<Workflow>,
): Promise<{ ok: true; workflows: Map<string, Workflow> } | { ok: false; reason: string }> {
  const workflows = new Map<string, Workflow>();
  if (!folder.routes) return { ok: true, workflows };
  let targets: RouteTarget[];
  try {
    targets = compileRoutes(folder).targets();
  } catch (err) {
    if (isDocexError(err)) return { ok: false, reason: `routes: ${err.message}` };
    throw err;
  }
  for (const target of targets) {
    const as = target.managedCompanyId ? ` (as managed company ${target.managedCompanyId})` : '';
    // A {company} route's company and workflow come from the table: the entry to fix is named.
    const entry = target.company === undefined ? '' : `companies.${target.company}: `;
    let workflow: Workflow;
    try {
      workflow = await fetchOnce(target);
    } catch (err) {
      const failure = fetchFailure(err, target.workflowId, target.managedCompanyId);
      // A refusal as a managed company names it already.
      const named = isApiError(err) && err.status === 403 && target.managedCompanyId !== undefined;
      return { ok: false, reason: `${entry}route to ${failure}${named ? '' : as}` };
    }
    // A payload-pdf folder pairs its files across the folder: its routes keep its mode.
    if (mode === 'payload-pdf' && target.mode !== undefined && target.mode !== mode) {
      return {
        ok: false,
        reason: `${entry}folder ${folder.name}: a route to workflow ${target.workflowId} takes mode ${target.mode}, but the folder is payload-pdf (its workflow's input source), which pairs files across the folder: its routes keep its mode`,
      };
    }
    // The route's own mode, else the folder's, is the one its files are handled in. The folder's
    // sendAt applies to the payload jobs of any route: not a route's check.
    const check = checkFolderWorkflow(
      { name: folder.name, workflowId: target.workflowId, mode: target.mode ?? mode },
      workflow,
    );
    if (!check.ok) return { ok: false, reason: `${entry}route to ${check.reason}${as}` };
    workflows.set(target.workflowId, workflow);
  }
  return { ok: true, workflows };
}

export interface FolderDirsOptions {
  /** The folder's key in the configuration (`folders[2]`), named when its drop folder is missing. */
  at: string;
  /** Told of each folder made (info): nothing is made without a line. */
  log?: Logger;
}

/**
 * The drop, processing, archive and error folders, each with its parent's group and group access
 * (core/shared-dir.ts). The drop folder is the operator's: it must exist (DOCEX_SOURCE_FOLDER_MISSING,
 * nothing made) unless the folder says `create: true`. The others are the agent's own and are made
 * when missing, once the drop folder is there. Those the agent writes into must be real
 * directories: a symbolic link (a drop folder's `.error` replaced by whoever can write there)
 * throws DOCEX_FOLDER_UNSAFE. A local drop folder itself may be a link.
 */
export async function ensureFolderDirs(folder: FolderConfig, options: FolderDirsOptions): Promise<void> {
  const { source } = folder;
  const kind = kindOf(source);
  const own = () => makeOwnDirs([...kind.ownDirs(source), folder.archiveDir, folder.errorDir]);
  // A remote drop folder is its source's to check (at each poll, until it is there).
  const drop = kind.localDropFolder(source);
  const created = drop === undefined ? await own() : await ensureDropFolder(folder, drop, options.at, own);
  // One line per folder that made any: a folder appearing on the disk is never silent.
  if (created.length > 0) options.log?.info({ folder: folder.name, created }, 'folders created');
}

async function makeOwnDirs(dirs: readonly string[]): Promise<string[]> {
  const created: string[] = [];
  for (const dir of dirs) created.push(...(await ensureRealDir(dir)));
  return created;
}

/** The local drop folder checked (made only with `create: true`), then the agent's own folders by `own`. */
async function ensureDropFolder(
  folder: FolderConfig,
  dir: string,
  at: string,
  own: () => Promise<string[]>,
): Promise<string[]> {
  const found = await fs.stat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    // A parent the agent's user may not enter (EACCES), a file on the way (ENOTDIR), …
    throw missingDropFolder(folder, dir, at, `cannot be reached (${err.code ?? err.message})`);
  });
  if (found && !found.isDirectory()) throw missingDropFolder(folder, dir, at, 'is not a folder');
  // A configuration built without the schema (tests) has no `create`: off, as the default.
  if (!found && folder.create !== true) throw missingDropFolder(folder, dir, at);
  try {
    return [...(found ? [] : await makeSharedDir(dir)), ...(await own())];
  } catch (err) {
    // A drop folder the agent's user may not write in (the ERP made it 0755, say): that folder stops.
    if (isDocexError(err)) throw err;
    const { code, path: where } = err as NodeJS.ErrnoException;
    throw missingDropFolder(
      folder,
      dir,
      at,
      `cannot be written (${code ?? String(err)}${where ? ` at ${where}` : ''})`,
    );
  }
}
