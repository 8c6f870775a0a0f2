/**
 * The scenarios' folders, removed when the whole run ends rather than after each scenario. This
 * machine's root file system is ext4 without a journal, which skips recently deleted inodes when it
 * allocates one: after a scenario deleted 10,000 files, each file created near them cost about
 * 200 µs of kernel CPU instead of 16 µs, minutes later still, which fell on the next scenario (and
 * on the agent, which creates a result record per file, more than on the baselines).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/** A new folder under the system's temp folder, kept until removeScratchDirs(). */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeScratchDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
