/**
 * At start (before sources start) and for a folder a reload adds: take back what a crash left.
 * Files in `.processing/` whose claim was never recorded are taken again; rejected files whose move
 * to the error folder was cut short are placed again; every unfinished journal item is resumed from
 * its recorded state, soonest upload deadline first. A file that crashed the agent is tried alone
 * or set aside first (poison-files.ts), so a restart never crash-loops on it.
 */
import { subFolders } from '../domain/relative-path.js';
import type { JournalItem, RecoveryStep, TakenOver, TakeOverScope } from '../journal/index.js';
import { intakeOf, kindOf } from '../sources/kinds.js';
import { type RecoveredFile, recoverProcessing } from '../sources/local/index.js';
import { placeRejected } from './finish.js';
import type { IntakeFile } from './intake.js';
import { setAsideIfPoison } from './poison-files.js';
import type { FolderRuntime, StepContext } from './types.js';

export interface RecoverySummary {
  resumed: number;
  reclaimed: number;
  placed: number;
  skipped: number;
  /** Files set aside as poison: their inspection was interrupted by crashes POISON_CRASHES times. */
  quarantined: number;
  /** Of the resumed, files another agent (or this agent's earlier start) held: taken over. */
  takenOver: number;
}

export interface RecoveryDeps {
  ctx: StepContext;
  folders: ReadonlyMap<string, FolderRuntime>;
  /** A file in `.processing/` with no live claim: schedule it as if just claimed. */
  accept: (folder: string, file: IntakeFile) => void;
  /**
   * An unfinished item: schedule it (after what is left of its wait, when a failed try left it
   * waiting). `rehash`: check first that its file is the one claimed.
   */
  resume: (item: JournalItem, rehash: boolean) => void;
}

const emptySummary = (): RecoverySummary => ({
  resumed: 0,
  reclaimed: 0,
  placed: 0,
  skipped: 0,
  quarantined: 0,
  takenOver: 0,
});

/**
 * The files whose claimed copies any agent on the journal reaches: local folders (on a shared file
 * system when several agents run them). An SFTP folder's claimed copies are in one host's spool.
 */
export function takeOverScope(folders: Iterable<FolderRuntime>, only?: string): TakeOverScope {
  const running = [...folders].filter((r) => only === undefined || r.config.name === only);
  return {
    folders: running.map((r) => r.config.name),
    sharedFolders: running.filter((r) => kindOf(r.config.source).sharedFolder).map((r) => r.config.name),
  };
}

/** Recovers every running folder, or `only` that one. */
export async function recoverUnfinished(deps: RecoveryDeps, only?: string): Promise<RecoverySummary> {
  const summary = emptySummary();
  // Read before any file is taken again: a reclaimed file becomes a new item while recovery still
  // runs (each journal read awaits), and an item in the plan as well would be driven twice.
  const plan = await unfinishedPlan(deps, only);
  for (const runtime of deps.folders.values()) {
    if (only !== undefined && runtime.config.name !== only) continue;
    await reclaimProcessing(deps, runtime, summary);
  }
  resumeItems(deps, plan, only, summary);
  return summary;
}

/**
 * Several agents on one journal, while running: files in the `.processing/` of the shared local
 * folders that no item stands for and that `orphaned` accepts (moved in long enough ago that the
 * agent that moved them most likely died before recording them; should two agents record the
 * same file, the journal answers the second one in-progress). Live agents may still be inspecting
 * such a file (one slowed by the journal's outage): only inspection records started before
 * `inspectionsBefore` count as crashes.
 */
export async function reclaimOrphans(
  deps: RecoveryDeps,
  orphaned: (file: RecoveredFile) => boolean,
  inspectionsBefore: number,
): Promise<number> {
  const summary = emptySummary();
  for (const runtime of deps.folders.values()) {
    if (!kindOf(runtime.config.source).sharedFolder) continue;
    await reclaimProcessing(deps, runtime, summary, orphaned, inspectionsBefore);
  }
  return summary.reclaimed;
}

/** Files taken over from another agent while running: resumed as recovery resumes them. */
export function resumeTakenOver(deps: RecoveryDeps, steps: readonly RecoveryStep[]): number {
  const summary = emptySummary();
  resumeItems(deps, steps, undefined, summary);
  return summary.takenOver;
}

/** The files of one folder's `.processing/` that no unfinished item stands for. */
async function reclaimProcessing(
  deps: RecoveryDeps,
  runtime: FolderRuntime,
  summary: RecoverySummary,
  consider: (file: RecoveredFile) => boolean = () => true,
  inspectionsBefore?: number,
): Promise<void> {
  const { journal } = deps.ctx;
  const stability = runtime.config.stability;
  const markers = stability.kind === 'done-marker' ? stability.suffixes : [];
  // SFTP folders: the local spool holds the downloaded copies (recorded under the remote URL).
  const intake = intakeOf(runtime.config);
  // Claims keep the sub-path a recursive folder's file was dropped at (an SFTP folder's spool copies too).
  for (const file of await recoverProcessing(intake.dir, { markerSuffixes: markers, recursive: true })) {
    if (!consider(file)) continue;
    // Before anything else reads it: a file that crashed the agent twice must not a third time.
    if (await setAsideIfPoison(deps.ctx, runtime, file, inspectionsBefore)) {
      summary.quarantined++;
      continue;
    }
    const newest = (await journal.byPath(file.path))[0];
    const sameFile =
      newest && newest.size === file.size && Math.trunc(newest.mtimeMs ?? -1) === Math.trunc(file.mtimeMs);
    if (newest && sameFile && newest.state === 'rejected') {
      await placeRejected(deps.ctx, runtime, newest);
      summary.placed++;
    } else if (!newest || !sameFile || newest.state === 'done') {
      // Moved in, then the agent stopped before the claim was recorded: take it again, under the
      // name it was dropped with (a numbered claim's note tells it), which its route is decided from.
      const name = file.originalName ?? file.name;
      deps.accept(runtime.config.name, {
        name,
        // A recursive folder's file: its sub-path in .processing is the one it was dropped at.
        originalPath: intake.originalPath([...subFolders(file.relativePath), name].join('/')),
        claimedPath: file.path,
      });
      summary.reclaimed++;
    }
  }
}

/** Every unfinished item with what to do about it, soonest upload deadline first. */
async function unfinishedPlan(deps: RecoveryDeps, only: string | undefined): Promise<RecoveryStep[]> {
  const { journal, uploadMarginMs } = deps.ctx;
  const scope = takeOverScope(deps.folders.values(), only);
  // p-queue priorities only order work that waits, so order the adds too.
  return (await journal.recoveryPlan({ marginMs: uploadMarginMs, scope })).sort(
    (a, b) => (a.item.uploadDeadline ?? Infinity) - (b.item.uploadDeadline ?? Infinity),
  );
}

/** Every unfinished file item of the plan with something to do, in the plan's order. */
function resumeItems(
  deps: RecoveryDeps,
  plan: readonly RecoveryStep[],
  only: string | undefined,
  summary: RecoverySummary,
): void {
  const { log } = deps.ctx;
  for (const step of plan) {
    if (step.item.kind !== 'file' || step.action.kind === 'none') continue;
    if (only !== undefined && step.item.folder !== only) continue;
    if (!deps.folders.has(step.item.folder)) {
      summary.skipped++;
      continue;
    }
    // Several agents on one journal: a file held before by another agent (or an earlier start).
    const previousOwner = 'previousOwner' in step ? (step as TakenOver).previousOwner : undefined;
    const fields = {
      folder: step.item.folder,
      file: step.item.fileName,
      itemId: step.item.id,
      jobId: step.item.jobId,
      action: step.action.kind,
    };
    if (previousOwner === undefined) log.info(fields, 'resuming file');
    else {
      log.info(
        { ...fields, state: step.item.state, previousOwner, epoch: step.item.epoch },
        'file taken over',
      );
      summary.takenOver++;
    }
    deps.resume(step.item, step.action.kind === 'validate');
    summary.resumed++;
  }
}
