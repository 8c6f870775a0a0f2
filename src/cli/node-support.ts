/**
 * The Node.js versions the agent runs on (package.json `engines`: 22 and 24, the LTS lines CI
 * tests). Checked before any command loads its modules: on an older Node the SQLite driver can take
 * the process down with a segmentation fault instead of an error, after `npm install` only warned.
 */

/** The oldest major supported. */
const OLDEST_SUPPORTED_NODE = 22;

/** The one line said on an unsupported Node (undefined: this one is supported). */
export function unsupportedNode(version: string): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
  if (major >= OLDEST_SUPPORTED_NODE) return undefined;
  return `docex-agent needs Node.js ${OLDEST_SUPPORTED_NODE} or newer (22 and 24 LTS are supported); this is Node.js ${version}. Install Node.js 24 LTS (https://nodejs.org/en/download, or your distribution's NodeSource packages) and run the command again.`;
}
