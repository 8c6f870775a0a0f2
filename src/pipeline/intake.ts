/**
 * From a claimed file to a validated journal item: decide its route (the workflow, managed
 * company and mode it goes with, recorded with the claim: pipeline/routes.ts), hash it, record the claim
 * (duplicates are rejected here), and inspect its content against the workflow. A file that changed since it was
 * judged complete is rejected, never half-sent.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { crashPoint } from '../core/crash-points.js';
import { existsOrFalse } from '../core/fs.js';
import { type ClaimInput, fileChange, type JournalItem, type RecordedClaim } from '../journal/index.js';
import { hashFile, readAndHash } from '../sources/hash.js';
import { kindOf, relativePathOf } from '../sources/kinds.js';
import { forgetClaimNote } from '../sources/local/index.js';
import { placeRejected, rejectItem } from './finish.js';
import type { Inspection } from './inspect/inspect-file.js';
import { routesOf, workflowOf } from './routes.js';
import { windowOpen } from './send-windows.js';
import type { FolderRuntime, StepContext } from './types.js';
import type { VerdictInputs } from './verdicts.js';

/** Files up to this size are read once at their claim and checked from memory. */
export const HOLD_MAX_BYTES = 1024 * 1024;

export interface IntakeFile {
  /** The name the ERP gave the file. */
  name: string;
  /** Where it was dropped (for status by path and duplicate checks). */
  originalPath: string;
  claimedPath: string;
}

export interface Intake {
  /** The item to drive (maybe already rejected), or the earlier item of this very drop. */
  item: JournalItem;
  /**
   * The file is a copy of a remote file recorded already (RecordedClaim `same-drop`): `item` is
   * that record, final or held by whichever agent; the copy was not recorded.
   */
  sameDrop: boolean;
}

/** Left by an inspection for the claim to clear: `left` once the record stands. */
interface InspectionRecord {
  left: boolean;
}

/**
 * The claim, clearing the record of the inspection that ended just before it (`inspectedPath`)
 * in its transaction; cleared alone when the claim fails. A kill between the two leaves the record:
 * the next start inspects that file alone (a suspect), which costs a lone inspection, nothing else.
 */
async function recordClaimClearing(
  ctx: StepContext,
  inspectedPath: string | undefined,
  input: ClaimInput,
): Promise<RecordedClaim> {
  try {
    return await ctx.journal.recordClaim({
      ...input,
      ...(inspectedPath === undefined ? {} : { inspectedPath }),
    });
  } catch (err) {
    if (inspectedPath !== undefined) await ctx.journal.inspectionEnded(inspectedPath).catch(() => undefined);
    throw err;
  }
}

/** Records the claim of a file now in `.processing/`. */
export async function intakeItem(
  ctx: StepContext,
  runtime: FolderRuntime,
  file: IntakeFile,
): Promise<Intake> {
  const digest = await readAndHash(file.claimedPath, HOLD_MAX_BYTES);
  const unchanged = digest.statSize === digest.size;
  // Decided once, here: a restart or another agent sends the file as recorded, whatever the
  // configuration says by then. A file no route takes is recorded to the folder's workflow, refused.
  const relativePath = relativePathOf(runtime.config, { sourcePath: file.originalPath, fileName: file.name });
  const route = routesOf(runtime.config).resolve(relativePath);
  const target = route.ok ? route : { workflowId: runtime.config.workflowId, managedCompanyId: undefined };
  // The route's own mode, else the folder's: recorded with the claim, which is what drives the item.
  const mode = (route.ok ? route.mode : undefined) ?? runtime.mode;
  // A small single file the pipeline drives next is checked now, from memory: one that passes is
  // claimed validated with its create intent, one journal commit instead of three. Its inspection
  // record is cleared by that commit too.
  const handover: InspectionRecord = { left: false };
  const checked =
    ctx.held && mode === 'single-file' && digest.bytes && unchanged && route.ok
      ? await inspect(
          ctx,
          runtime,
          file.name,
          file.claimedPath,
          digest.bytes,
          digest.sha256,
          route.workflowId,
          handover,
        )
      : undefined;
  const result = await recordClaimClearing(ctx, handover.left ? file.claimedPath : undefined, {
    folder: runtime.config.name,
    sourcePath: file.originalPath,
    // Kept with the claim: its archive, error, status and proof places keep the sub-path even
    // after the folder's path changes in the configuration.
    relativePath,
    claimedPath: file.claimedPath,
    fileName: file.name,
    size: digest.size,
    mtimeMs: digest.mtimeMs,
    sha256: digest.sha256,
    workflowId: target.workflowId,
    // '' for none: the item's calls never take a company the folder gains later.
    managedCompanyId: target.managedCompanyId ?? '',
    mode,
    allowDuplicates: runtime.config.allowDuplicates,
    // Outside the folder's send window no intent is recorded: the file waits validated.
    ...(checked?.ok && windowOpen(runtime, ctx.clock.now()) ? { validatedNote: checked.kind } : {}),
    ...(route.ok ? {} : { refused: { code: route.code, reason: route.reason } }),
    ...(kindOf(runtime.config.source).remote ? { remote: true } : {}),
    stillThere: () => existsOrFalse(file.claimedPath),
  });
  // Claimed under a numbered name: the journal has the dropped name now, the claim's note can go.
  if (path.basename(file.claimedPath) !== file.name) await forgetClaimNote(file.claimedPath);
  if (result.kind === 'same-drop') return { item: result.item, sameDrop: true };
  const log = ctx.log.child({ folder: runtime.config.name, file: file.name });
  if (result.kind === 'duplicate') {
    log.warn({ duplicateOf: result.earlier.id, jobId: result.earlier.jobId }, 'duplicate content');
    await placeRejected(ctx, runtime, result.item, {
      details: { earlierFile: result.earlier.fileName, earlierJobId: result.earlier.jobId },
    });
    return { item: result.item, sameDrop: false };
  }
  if (result.kind === 'claimed' && result.item.state === 'rejected') {
    // Refused in the claim (no route takes it): recorded so, and moved to the error folder now.
    log.warn({ code: result.item.rejectCode }, 'no route takes the file');
    await placeRejected(ctx, runtime, result.item, route.ok ? {} : { details: route.details });
    return { item: result.item, sameDrop: false };
  }
  if (!unchanged) {
    const rejected = await rejectItem(
      ctx,
      runtime,
      result.item,
      'DOCEX_SOURCE_CHANGED',
      'the file changed while it was read',
    );
    return { item: rejected, sameDrop: false };
  }
  let item = result.item;
  if (result.kind === 'claimed') {
    // A rejection found at the claim is the verdict validation gives: the file is not parsed twice.
    if (digest.bytes)
      ctx.held?.set(item.id, { bytes: digest.bytes, ...(checked ? { inspection: checked } : {}) });
    // Claimed validated with its intent, by this process, moments ago: nothing was sent for it.
    if (item.state === 'creating') item = ctx.intents.recorded(item);
  }
  crashPoint('after-claim');
  log.info({ itemId: item.id, size: digest.size, sha256: digest.sha256.slice(0, 12) }, 'file taken');
  return { item, sameDrop: false };
}

/** `claimed` → `validated` or `rejected`. `rehash`: after a restart, check the file is the one claimed. */
export async function validateItem(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  rehash: boolean,
): Promise<JournalItem> {
  const filePath = item.claimedPath;
  // Read at the claim, moments ago, by this process: nothing to re-check, nothing to read again.
  const held = rehash ? undefined : ctx.held?.get(item.id);
  if (held && filePath) return inspectAndMove(ctx, runtime, item, filePath, held.bytes, held.inspection);
  const st = filePath ? await fs.stat(filePath).catch(() => undefined) : undefined;
  if (!filePath || !st) {
    return ctx.journal.transition(item.id, 'rejected', {
      code: 'DOCEX_SOURCE_LOST',
      reason: 'the claimed file is no longer in .processing',
    });
  }
  const observed = {
    size: st.size,
    mtimeMs: st.mtimeMs,
    ...(rehash ? { sha256: (await hashFile(filePath)).sha256 } : {}),
  };
  const change = fileChange(
    { size: item.size ?? -1, mtimeMs: item.mtimeMs ?? -1, sha256: item.sha256 },
    observed,
  );
  if (change.changed) {
    return rejectItem(
      ctx,
      runtime,
      item,
      'DOCEX_SOURCE_CHANGED',
      `the file changed after it was taken (${change.what})`,
    );
  }
  return inspectAndMove(ctx, runtime, item, filePath, undefined, undefined);
}

async function inspectAndMove(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  filePath: string,
  bytes: Buffer | undefined,
  atClaim: Inspection | undefined,
): Promise<JournalItem> {
  const inspection =
    atClaim ?? (await inspect(ctx, runtime, item.fileName, filePath, bytes, item.sha256, item.workflowId));
  if (!inspection.ok) {
    return rejectItem(ctx, runtime, item, inspection.code, inspection.reason, {
      ...(inspection.details ? { details: inspection.details } : {}),
    });
  }
  return ctx.journal.transition(item.id, 'validated', { note: `${inspection.kind}` });
}

/**
 * Inspection parses dropped bytes, in a worker under memory and time limits. Should a file still
 * take the whole process down, the journal tells: the parse is recorded as it starts and cleared
 * after, so a restart sets aside a file that keeps killing the agent (poison-files.ts) instead of
 * crashing again. With the content's `sha256`, a verdict for the same bytes under the same
 * settings (ctx.verdicts) is reused, and a new one kept.
 */
export async function inspect(
  ctx: StepContext,
  runtime: FolderRuntime,
  fileName: string,
  filePath: string,
  bytes: Buffer | undefined,
  sha256?: string,
  workflowId?: string,
  /** Given: a verdict leaves its record standing, for the caller to clear (`left` says whether). */
  handover?: InspectionRecord,
): Promise<Inspection> {
  const workflow = workflowId === undefined ? runtime.workflow : workflowOf(runtime, workflowId);
  const opts = {
    path: filePath,
    fileName,
    inputSourceType: workflow.inputSource.type,
    maxBytes: ctx.maxFileBytes,
    allowHardLinks: runtime.config.allowHardLinks,
  };
  const inputs = sha256 && ctx.verdicts ? await verdictInputs(ctx, opts, sha256) : undefined;
  const known = inputs && ctx.verdicts?.get(inputs);
  if (known) return known;
  // Recorded when a worker takes the file: a kill while it waits for one says nothing of the file.
  let recorded = false;
  const started = async () => {
    await ctx.journal.inspectionStarting(filePath);
    recorded = true;
    crashPoint('mid-inspection');
  };
  try {
    const verdict = await ctx.inspector.runTracked('inspectFile', fileName, started, {
      ...opts,
      ...(bytes ? { bytes } : {}),
    });
    if (inputs) ctx.verdicts?.set(inputs, verdict);
    if (handover && recorded) {
      handover.left = true;
      recorded = false;
    }
    return verdict;
  } finally {
    if (recorded) await ctx.journal.inspectionEnded(filePath);
  }
}

/** What a verdict for this file depends on besides its bytes; undefined when the path cannot be seen. */
async function verdictInputs(
  ctx: StepContext,
  opts: Omit<VerdictInputs, 'sha256' | 'limits' | 'regularFile' | 'links'> & { path: string },
  sha256: string,
): Promise<VerdictInputs | undefined> {
  const st = await fs.lstat(opts.path).catch(() => undefined);
  if (!st) return undefined;
  const { path: _path, ...rest } = opts;
  return {
    ...rest,
    sha256,
    regularFile: st.isFile(),
    links: st.nlink,
    limits: ctx.inspector.limitsKey,
  };
}
