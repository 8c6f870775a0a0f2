/**
 * The suspect/poison rule, applied at recovery to each file found in `.processing/` before
 * anything else reads it. Every inspection is recorded in the journal as it starts and cleared
 * after, so a record left behind is an inspection a crash cut short:
 * - one such crash makes the file a suspect: it is inspected again alone, before any folder
 *   starts; should the agent die then, nothing else was running;
 * - POISON_CRASHES of them (the last one while it was inspected alone) make it poison: it is set
 *   aside (DOCEX_INPUT_POISON) before anything reads it, so a restart never crash-loops on a file.
 * A kill from outside during busy work (an OOM kill of the machine, a restart) thus never makes a
 * good file poison: the lone inspection passes and clears the record.
 */
import { subFolders } from '../domain/relative-path.js';
import { isFinal } from '../journal/index.js';
import { rejectItem } from './finish.js';
import { inspect } from './intake.js';
import { rejectEntry } from './reject-entry.js';
import type { FolderRuntime, StepContext } from './types.js';

/** Crashes during a file's inspection after which it is set aside as poison. */
export const POISON_CRASHES = 2;

/**
 * A suspect inspected alone. Its verdict is not kept: the pipeline inspects the file again in its
 * turn. True when the inspection passed.
 */
export async function inspectSuspect(
  ctx: StepContext,
  runtime: FolderRuntime,
  fileName: string,
  filePath: string,
): Promise<boolean> {
  const inspection = await inspect(ctx, runtime, fileName, filePath, undefined);
  return inspection.ok;
}

/**
 * Applies the rule to a file found in `.processing/`: true when it was set aside as poison (to the
 * error folder, its item rejected if it has one); false when it may be taken up (a suspect was
 * inspected alone first). `startedBefore`: records of inspections started later are not crashes'
 * (another agent may be inspecting the file now).
 */
export async function setAsideIfPoison(
  ctx: StepContext,
  runtime: FolderRuntime,
  file: { name: string; path: string; relativePath?: string },
  startedBefore?: number,
): Promise<boolean> {
  const { journal, log, clock } = ctx;
  const crashes = await journal.interruptedInspections(file.path, startedBefore);
  if (crashes === 0) return false;
  if (crashes < POISON_CRASHES) {
    const ok = await inspectSuspect(ctx, runtime, file.name, file.path);
    log.warn(
      { folder: runtime.config.name, file: file.name, crashes, inspected: ok ? 'ok' : 'refused' },
      'file inspected alone: a crash interrupted its inspection',
    );
    return false;
  }
  const code = 'DOCEX_INPUT_POISON';
  const reason = `the agent crashed ${crashes} times while inspecting this file; it was set aside so it cannot crash the agent again`;
  const item = (await journal.byPath(file.path)).find((i) => !isFinal(i.state));
  if (item) {
    await rejectItem(ctx, runtime, item, code, reason);
  } else {
    await rejectEntry(
      {
        name: file.name,
        path: file.path,
        subFolders: subFolders(file.relativePath),
        code,
        reason,
        fix: 'Do not drop this file again as it is: send it to the agent’s maintainers, with the log lines of the crashes.',
      },
      {
        folder: runtime.config.name,
        workflowId: runtime.config.workflowId,
        errorDir: runtime.config.errorDir,
        now: clock.now(),
      },
    );
  }
  await journal.inspectionEnded(file.path);
  log.error({ folder: runtime.config.name, file: file.name, code, crashes }, 'poison file set aside');
  return true;
}
