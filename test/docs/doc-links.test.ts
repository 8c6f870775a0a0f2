/**
 * scripts/check-doc-links.mjs (CI runs it): the repository's pages pass, and it fails on a link
 * that leaves the repository (the pages must stand alone) and on a link of a packed page to a file
 * the package does not ship.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../scripts/check-doc-links.mjs', import.meta.url));
// npm (for `npm pack --dry-run`) runs on the Node running this test.
const env = {
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH']}`,
};

function check(root?: string): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [SCRIPT, ...(root ? [root] : [])], { encoding: 'utf8', env });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A small repository in a temp folder: `files` by path, and a package.json shipping `packed`. */
function repo(files: Record<string, string>, packed: string[]): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-links-'));
  const root = path.join(dir, 'repo');
  for (const [name, text] of Object.entries({
    'package.json': JSON.stringify({ name: 'links-fixture', version: '1.0.0', files: packed }),
    ...files,
  })) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe('check-doc-links', () => {
  it("passes on the repository's own pages and package", () => {
    const run = check();
    expect(run.out).toMatch(/, 0 broken/);
    expect(run.status).toBe(0);
  });

  it('fails on a relative link that leaves the repository, even to a file that exists', () => {
    const root = repo({ 'README.md': '# r\n\n[decisions](../shared/decisions.md)\n', 'docs/a.md': '# a\n' }, [
      'docs/',
    ]);
    mkdirSync(path.join(root, '..', 'shared'));
    writeFileSync(path.join(root, '..', 'shared', 'decisions.md'), '# outside\n');
    const run = check(root);
    expect(run.out).toContain('README.md: ../shared/decisions.md: leaves the repository');
    expect(run.status).toBe(1);
  });

  it('fails on a link of a packed page to a file the package does not ship', () => {
    const root = repo(
      {
        'README.md': '# r\n\n[install](docs/install.md)\n',
        'docs/install.md': '# install\n',
      },
      ['systemd/'],
    );
    const run = check(root);
    expect(run.out).toContain('README.md: docs/install.md: not in the package');
    expect(run.status).toBe(1);
  });
});
