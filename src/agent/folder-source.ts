/**
 * The source of one running folder, wired to the pipeline: the pipeline's part every source needs
 * (its accept, which names are sidecars, the reason files, the refusal of an entry) lent to the
 * folder's kind of source (sources/open-source.ts), which builds it.
 */
import type { DocexError } from '../core/errors.js';
import { errorRecord, errorText } from '../pipeline/outcome-files.js';
import type { Pipeline } from '../pipeline/pipeline.js';
import { rejectEntry } from '../pipeline/reject-entry.js';
import { isSidecarName, sidecarPathOf, usesSidecars } from '../pipeline/sidecar.js';
import type { FolderRuntime } from '../pipeline/types.js';
import type { FolderSource, SourceDeps } from '../sources/folder-source.js';
import { openFolderSource } from '../sources/open-source.js';

export interface FolderSourceDeps extends Omit<SourceDeps, 'hooks' | 'onUnsafe'> {
  pipeline: Pipeline;
  /** Its `.processing/` (or spool) proved not a real directory while running: the folder must stop. */
  onFolderUnsafe?: (folder: string, err: DocexError) => void;
}

export function createFolderSource(runtime: FolderRuntime, deps: FolderSourceDeps): FolderSource {
  const folder = runtime.config;
  const { pipeline, onFolderUnsafe, ...rest } = deps;
  return openFolderSource(folder, {
    ...rest,
    ...(onFolderUnsafe ? { onUnsafe: (err: DocexError) => onFolderUnsafe(folder.name, err) } : {}),
    hooks: {
      accept: (name, file, onLost) => pipeline.accept(name, file, onLost),
      prepareIntake: () => pipeline.prepareIntake(),
      isCompanion: (name) => isSidecarName(runtime, name),
      companionsOf: (name) => (usesSidecars(runtime) ? [sidecarPathOf(runtime, name)] : []),
      errorFiles: (item, now) => {
        const record = errorRecord(item, now);
        return [
          { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
          { suffix: '.error.txt', content: errorText(record) },
        ];
      },
      rejectEntry: async (entry) => {
        const placed = await rejectEntry(entry, {
          folder: folder.name,
          workflowId: folder.workflowId,
          errorDir: folder.errorDir,
          now: deps.clock.now(),
        });
        deps.log.warn({ folder: folder.name, file: entry.name, code: entry.code, placed }, 'entry refused');
      },
    },
  });
}
