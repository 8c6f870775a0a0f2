/**
 * Folders the agent makes where people share files with it (drop, archive, error and output
 * folders) follow their parent: its group, its setgid bit and its group access (read, write), and
 * nothing for others. Under the 2770 folder of systemd/README.md every new folder is 2770, so the
 * ERP's account (a member of the group) can write drop files and read archives and outputs. Modes
 * are set explicitly: a umask (0022 by hand, 0007 in the unit) does not change them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

/**
 * The modes of systemd/README.md and the unit: the drop folders and what the ERP reads back are
 * the agent user's and its group's, 2770 (step 3); the state folder is the agent's alone, 0700
 * (`StateDirectoryMode=`).
 */
export const GUIDE_MODES = { shared: '2770', state: '0700' } as const;

/** `'a b'` for a shell; plain paths as they are. */
export const shellWord = (text: string) =>
  /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;

/** The command that makes `dir` for the agent's user and group of the guide (`docex-agent`). */
export function installDirCommand(dir: string, mode: string): string {
  return `install -d -o docex-agent -g docex-agent -m ${mode} ${shellWord(dir)}`;
}

/** The mode of a folder made inside a folder of mode `parentMode`. */
export function sharedDirMode(parentMode: number): number {
  return 0o700 | (parentMode & 0o070) | (parentMode & 0o2000);
}

/**
 * Folder creations of this process, one at a time: a folder is briefly 0700 between its mkdir and
 * its chmod, and a concurrent call making a child inside it would copy that mode.
 */
let queue: Promise<unknown> = Promise.resolve();

/**
 * `mkdir -p` where each folder made takes its mode and group from its parent (see above). Answers
 * the folders it made, outermost first (none when `dir` was there).
 */
export async function makeSharedDir(dir: string): Promise<string[]> {
  const target = path.resolve(dir);
  // The common case, a folder that exists, needs no turn in the queue.
  if (
    await fs.stat(target).then(
      () => true,
      () => false,
    )
  )
    return [];
  const run = queue.then(() => makeMissing(target));
  queue = run.catch(() => undefined);
  return run;
}

/** `dir`, or its nearest parent folder that exists. */
export async function nearestExisting(dir: string): Promise<string> {
  let current = path.resolve(dir);
  for (;;) {
    try {
      await fs.stat(current);
      return current;
    } catch (err) {
      const parent = path.dirname(current);
      if (errno(err) !== 'ENOENT' || parent === current) throw err;
      current = parent;
    }
  }
}

async function makeMissing(target: string): Promise<string[]> {
  const missing: string[] = [];
  const made: string[] = [];
  const existing = await nearestExisting(target);
  for (let folder = target; folder !== existing; folder = path.dirname(folder)) missing.unshift(folder);
  for (const folder of missing) {
    const parent = await fs.stat(path.dirname(folder));
    const mode = sharedDirMode(parent.mode);
    try {
      // With its final mode already, as far as the umask lets it (all of it under the unit's 0007).
      await fs.mkdir(folder, { mode });
    } catch (err) {
      // Made meanwhile by another process (the ERP, a `check`): its maker chose its mode.
      if (errno(err) === 'EEXIST') continue;
      throw err;
    }
    // The parent's group even without setgid on it; only possible for a member of that group (or root).
    await fs.chown(folder, -1, parent.gid).catch(() => {});
    await fs.chmod(folder, mode);
    made.push(folder);
  }
  // The new entries survive a power cut as the files renamed into them do.
  for (const folder of made) await syncDir(path.dirname(folder));
  return made;
}

/** fsync of a folder: the entries made or renamed in it are on disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
