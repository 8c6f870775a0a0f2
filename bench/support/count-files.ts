import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Files under `dir` (recursively) whose name ends with `suffix`; temp files (dot names) left out. */
export function countFiles(dir: string, suffix: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) n += countFiles(path.join(dir, entry.name), suffix);
    else if (entry.name.endsWith(suffix)) n++;
  }
  return n;
}
