/**
 * A dropped file's path relative to its drop folder (`acme/invoices/x.pdf`, POSIX separators): what
 * routes match in a recursive folder, and the sub-path its archive, error, status and proof places
 * keep. A sub-folder's name is as hostile as a file's: a relative path is taken only when each of
 * its folders passes the rule of dropped names (file-names.ts) and the file's own name could not
 * steer a path, so no path built from it ever leaves the folder it is joined to. The file's own name
 * is judged by the pipeline, which refuses a bad one with its reason (DOCEX_INPUT_BAD_NAME) under
 * its sub-path, as in a flat folder. Plain values in, plain values out.
 */
import { nameFault } from './file-names.js';

/**
 * A name no path may be built from: `.`, `..`, empty, a `/` or a NUL. A real file system never
 * holds one; a hostile SFTP server may list one.
 */
export function steersPath(name: string): boolean {
  const fault = nameFault(name);
  return fault === 'dot' || fault === 'slash' || fault === 'empty' || name.includes('\u0000');
}

/**
 * The segments of a relative path, or undefined when a folder is not a name the agent takes or the
 * file's own name could steer a path.
 */
export function relativeSegments(relative: string): string[] | undefined {
  const segments = relative.split('/');
  const folders = segments.slice(0, -1);
  const name = segments[segments.length - 1] ?? '';
  return folders.every((s) => nameFault(s) === undefined) && !steersPath(name) ? segments : undefined;
}

/**
 * `file` below `root` as a POSIX relative path (`sep`: the separator both are written with), or
 * undefined when it is not below it or its segments are not taken (relativeSegments).
 */
export function relativeBelow(root: string, file: string, sep: string): string | undefined {
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  if (!file.startsWith(prefix)) return undefined;
  const relative = file.slice(prefix.length).split(sep).join('/');
  return relativeSegments(relative) === undefined ? undefined : relative;
}

/** The folders of a relative path above its file (`acme/invoices/x.pdf` → `['acme', 'invoices']`). */
export function subFolders(relative: string | undefined): string[] {
  const segments = relative === undefined ? undefined : relativeSegments(relative);
  return segments === undefined ? [] : segments.slice(0, -1);
}
