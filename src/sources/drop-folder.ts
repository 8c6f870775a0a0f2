/**
 * A drop folder that cannot be used (missing, not a folder, out of reach, not writable), said the
 * same way wherever it is found: at start and on a reload (agent/folders.ts), by a local or SFTP
 * source, and by `check`. The message names the folder, the path, its config key and the fix.
 */
import type { FolderConfig } from '../config/index.js';
import { DocexError } from '../core/errors.js';
import { GUIDE_MODES, installDirCommand } from '../core/shared-dir.js';

export const SOURCE_FOLDER_MISSING_CODE = 'DOCEX_SOURCE_FOLDER_MISSING';

/** The key of a folder not found in the configuration at hand (or whose source was not told it). */
const unlistedKey = (name: string) => `folders[name=${name}]`;

/** Where a folder stands in the configuration (`folders[2]`): errors name its keys from it. */
export function folderKey(folders: readonly Pick<FolderConfig, 'name'>[], name: string): string {
  const at = folders.findIndex((f) => f.name === name);
  return at < 0 ? unlistedKey(name) : `folders[${at}]`;
}

/** What keeps a drop folder from being used; the error's message and fix follow from it. */
export type DropFolderTrouble =
  | 'does not exist'
  | 'is not a folder'
  | `cannot be reached (${string})`
  | `cannot be written (${string})`;

const NONE_MADE = 'the agent makes no drop folder unless the folder says create: true';

/**
 * A local drop folder's trouble as `check` shows it: `text` (`<dir> (<key>) <what>…`) and `fix`.
 * The error of missingDropFolder says the same words.
 */
export function dropFolderTrouble(
  dir: string,
  at: string,
  what: DropFolderTrouble,
): { text: string; fix: string } {
  const key = `${at}.source.path`;
  const fix =
    what === 'does not exist'
      ? `create it for the agent's user and the ERP's group (${installDirCommand(dir, GUIDE_MODES.shared)}, systemd/README.md step 5) or correct ${key}, then reload; or set ${at}.create: true to let the agent make it`
      : what === 'is not a folder' || what === 'cannot be reached (ENOTDIR)'
        ? `put a folder there (a file stands on its path) or correct ${key}, then reload`
        : what.startsWith('cannot be reached')
          ? `let the agent's user enter every folder above it, or correct ${key}, then reload`
          : `give it the guide's owner and mode (${installDirCommand(dir, GUIDE_MODES.shared)}, systemd/README.md step 5) so the agent's user may make its .processing, archive and error folders, then reload`;
  return { text: `${dir} (${key}) ${what}${what === 'does not exist' ? `; ${NONE_MADE}` : ''}`, fix };
}

/**
 * A local drop folder that cannot be used: the folder stops (the others run), and the message
 * names the folder, the path, the config key and the ways out. `at` is the folder's key
 * (`folders[2]`; undefined when the caller was not told it).
 */
export function missingDropFolder(
  folder: Pick<FolderConfig, 'name'>,
  dir: string,
  at: string | undefined,
  what: DropFolderTrouble = 'does not exist',
): DocexError {
  const where = at ?? unlistedKey(folder.name);
  const { text, fix } = dropFolderTrouble(dir, where, what);
  return new DocexError(
    SOURCE_FOLDER_MISSING_CODE,
    `folder ${folder.name}: drop folder ${text}. Fix: ${fix}`,
    {
      details: { folder: folder.name, path: dir, at: `${where}.source.path` },
    },
  );
}

/** An SFTP folder's remote drop folder that does not exist on `server` (`sftp://…`): looked for again at each poll. */
export function missingRemoteDropFolder(
  folder: Pick<FolderConfig, 'name'>,
  dir: string,
  server: string,
  at: string | undefined,
): DocexError {
  const where = at ?? unlistedKey(folder.name);
  const key = `${where}.source.path`;
  return new DocexError(
    SOURCE_FOLDER_MISSING_CODE,
    `folder ${folder.name}: remote drop folder ${dir} on ${server} (${key}) does not exist; ${NONE_MADE}. Fix: create it on the server, writable by the ERP's account and the agent's login, or correct ${key}; or set ${where}.create: true. Each poll looks again`,
    { details: { folder: folder.name, path: dir, at: key } },
  );
}
