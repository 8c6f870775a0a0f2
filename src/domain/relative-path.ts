/**
 * A dropped file's path relative to its drop folder (`acme/invoices/x.pdf`, POSIX separators): what
 * routes match in a recursive folder, and the sub-path its archive, error, status and proof places
 * keep. A sub-folder's name is as hostile as a file's: a relative path is taken only when every
 * segment passes the rule of dropped names (file-names.ts), so no path built from it ever leaves
 * the folder it is joined to. Plain values in, plain values out.
 */
import { nameFault } from './file-names.js';

/** The segments of a relative path, or undefined when one is not a name the agent takes. */
export function relativeSegments(relative: string): string[] | undefined {
  const segments = relative.split('/');
  return segments.every((s) => nameFault(s) === undefined) ? segments : undefined;
}

/**
 * `file` below `root` as a POSIX relative path (`sep`: the separator both are written with), or
 * undefined when it is not below it or a segment is not a name the agent takes.
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
