/**
 * A fresh clone's `npm install` leaves package-lock.json as it is and prints no warning of ours:
 * npm writes `hasInstallScript` for a package the registry says has one (any install script, or a
 * binding.gyp even with `"gypfile": false`, as better-sqlite3 ships), so the lockfile must already
 * say it; and npm 11 warns about every package with an install script that package.json's
 * `allowScripts` does not name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  hasInstallScript?: boolean;
  link?: boolean;
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts: Record<string, boolean> };

/** `node_modules/a/node_modules/@b/c` → `@b/c`. */
const nameOf = (key: string) => key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** Whether the installed package has what the registry counts as an install script. */
function installScript(dir: string): boolean {
  const manifest = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const scripts = manifest.scripts ?? {};
  return (
    Boolean(scripts['preinstall'] || scripts['install'] || scripts['postinstall']) ||
    existsSync(`${dir}/binding.gyp`)
  );
}

describe('package-lock.json and allowScripts', () => {
  it('marks every installed package with an install script (or a binding.gyp) hasInstallScript', () => {
    const installed = Object.entries(lock.packages).filter(
      ([key, entry]) => key !== '' && !entry.link && existsSync(`${key}/package.json`),
    );
    expect(installed.length).toBeGreaterThan(100);
    const unmarked = installed
      .filter(([key, entry]) => installScript(key) && entry.hasInstallScript !== true)
      .map(([key]) => key);
    expect(unmarked).toEqual([]);
  });

  it('names every package with an install script in allowScripts (npm 11 warns about the others)', () => {
    const uncovered = Object.entries(lock.packages)
      .filter(([key, entry]) => key !== '' && entry.hasInstallScript)
      .map(([key]) => nameOf(key))
      .filter((name) => !(name in pkg.allowScripts));
    expect(uncovered).toEqual([]);
  });
});
