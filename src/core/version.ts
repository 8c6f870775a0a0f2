import { readFileSync } from 'node:fs';

/** The agent's version, from the package.json two levels up (src/ or dist/ alike). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}
