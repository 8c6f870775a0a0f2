/**
 * A real journal and real local folders in a temp dir, with the StepContext the pipeline's parts
 * take: for unit tests of one part (recovery, the poison rule) without a whole agent.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { agentConfigSchema } from '../../../src/config/index.js';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { Workflow } from '../../../src/domain/wire.js';
import type { JournalItem, JournalStore } from '../../../src/journal/index.js';
import { SqliteJournal } from '../../../src/journal/sqlite-journal.js';
import { FreshIntents } from '../../../src/pipeline/fresh-intents.js';
import { sharedInspector } from '../../../src/pipeline/isolate/inspector.js';
import type { FolderRuntime, PipelineJobs, StepContext } from '../../../src/pipeline/types.js';

const workflow = {
  id: 'wf',
  inputSource: { type: 'PDF' },
  enabled: true,
  validated: true,
} as unknown as Workflow;

export interface PartWorld {
  dir: string;
  clock: ManualClock;
  journal: JournalStore;
  ctx: StepContext;
  folders: Map<string, FolderRuntime>;
  /** Writes a file into the folder's `.processing/` (as if claimed); answers its path. */
  putClaimed(folder: string, name: string, content: string | Buffer): string;
  /** Records the claim of a file put there, as the intake does (state `claimed`). */
  recordClaim(folder: string, claimedPath: string): Promise<JournalItem>;
  close(): Promise<void>;
}

export function makePartWorld(folderNames: string[]): PartWorld {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-part-'));
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    stateDir: path.join(dir, 'state'),
    folders: folderNames.map((name) => ({
      name,
      source: { type: 'local', path: path.join(dir, name) },
      workflowId: 'wf',
    })),
  });
  const clock = new ManualClock();
  const journal = SqliteJournal.open(path.join(dir, 'state', 'journal.sqlite'), {
    clock,
    log: silentLogger(),
  });
  const folders = new Map(
    config.folders.map((f) => [f.name, { config: f, mode: 'single-file' as const, workflow }]),
  );
  const ctx: StepContext = {
    journal,
    jobs: {} as PipelineJobs,
    clock,
    log: silentLogger(),
    maxFileBytes: 1 << 20,
    inspector: sharedInspector(),
    uploadMarginMs: 0,
    lookupMarginMs: 0,
    signal: new AbortController().signal,
    intents: new FreshIntents(),
  };
  return {
    dir,
    clock,
    journal,
    ctx,
    folders,
    putClaimed(folder, name, content) {
      const processing = path.join(dir, folder, '.processing');
      mkdirSync(processing, { recursive: true });
      const claimedPath = path.join(processing, name);
      writeFileSync(claimedPath, content);
      return claimedPath;
    },
    async recordClaim(folder, claimedPath) {
      const st = statSync(claimedPath);
      const name = path.basename(claimedPath);
      return (
        await journal.recordClaim({
          folder,
          sourcePath: path.join(dir, folder, name),
          claimedPath,
          fileName: name,
          size: st.size,
          mtimeMs: st.mtimeMs,
          sha256: createHash('sha256').update(readFileSync(claimedPath)).digest('hex'),
          workflowId: 'wf',
          mode: 'single-file',
          allowDuplicates: true,
        })
      ).item;
    },
    async close() {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
