/**
 * The agent runs from compiled JavaScript, as installed (`bin: dist/cli/main.js`): under tsx its
 * resident set carries the TypeScript loader. Built into node_modules/.cache so package imports
 * resolve and the repository's dist/ is left alone; removed again by the runner.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// One per checkout: worktrees share one node_modules, and a run removes its build when it ends.
export const AGENT_BUILD_DIR = path.join(
  root,
  'node_modules',
  '.cache',
  `docex-bench-${path.basename(root)}`,
);

/**
 * Compiles src/ (type errors do not stop the emit) and answers the CLI entry. `buildDir`: another
 * folder under node_modules/.cache (two test files building at once must not share one).
 */
export function buildAgent(buildDir = AGENT_BUILD_DIR): string {
  const DIST = path.join(buildDir, 'dist');
  rmSync(buildDir, { recursive: true, force: true });
  try {
    execFileSync(
      path.join(root, 'node_modules', '.bin', 'tsc'),
      ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', DIST, '--sourceMap', 'false'],
      { stdio: 'ignore' },
    );
  } catch {
    // tsc exits non-zero on type errors elsewhere in the tree but still writes the files.
  }
  cpSync(path.join(root, 'src', 'sandbox', 'seed-data'), path.join(DIST, 'sandbox', 'seed-data'), {
    recursive: true,
  });
  // The CLI reads its version from ../package.json, and "type": "module" makes the .js files ESM.
  cpSync(path.join(root, 'package.json'), path.join(buildDir, 'package.json'));
  return path.join(DIST, 'cli', 'main.js');
}

export function removeAgentBuild(buildDir = AGENT_BUILD_DIR): void {
  rmSync(buildDir, { recursive: true, force: true });
}
