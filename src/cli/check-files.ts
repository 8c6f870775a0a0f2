/**
 * The doctor's file-system checks: folders writable, private key not readable by group or others,
 * free disk space. Each returns check lines; I/O only through node:fs.
 */
import { constants, statSync } from 'node:fs';
import { access, mkdir, stat, statfs } from 'node:fs/promises';
import path from 'node:path';
import { describeGroup, describeUser } from '../core/accounts.js';
import { octalMode } from '../core/file-mode.js';
import { GUIDE_MODES, installDirCommand, makeSharedDir, nearestExisting } from '../core/shared-dir.js';
import { dropFolderTrouble } from '../sources/drop-folder.js';
import type { CheckLine } from './check-line.js';

const MIB = 1024 * 1024;
/** Below this a folder fails: the journal or an archive move could not finish. */
export const DISK_FAIL_BYTES = 100 * MIB;
/** Below this (or 5 % of the disk) a warning. */
export const DISK_WARN_BYTES = 1024 * MIB;

const errorCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? String(err);

/**
 * Root passes every access test, so a check run as root proves nothing of the agent's user and
 * must not make folders that user then could not write. It says so once (this line), and each
 * folder line only says what is there.
 */
export const ROOT_NOTICE: CheckLine = {
  ok: true,
  warn: true,
  what: 'folder access',
  detail:
    "not tested: check runs as root, and root may read and write any folder, so a pass would prove nothing of the agent's user; folders are only looked at, none is made",
  hint: "run check as the agent's user to test its access (systemd/README.md, step 6: systemd-run -p User=docex-agent …, or sudo -u docex-agent)",
};

/** How the agent makes a folder of its own, and the mode the guide and the unit give it. */
export interface OwnFolder {
  /** `0700` (the state folder, and anything under it) or `2770` (shared with the ERP's group). */
  mode: string;
  /** When the agent makes it: `at start`, `at its first write`. */
  madeWhen: string;
  /** Makes it as the agent would (default: its parent's group and group access, shared-dir.ts). */
  make?: (dir: string) => Promise<unknown>;
}

/** What is there, as root sees it (no access tested). */
async function lookedAt(what: string, dir: string, missing: string, hint: string): Promise<CheckLine> {
  try {
    const found = await stat(dir);
    return {
      ok: true,
      what,
      detail: `${dir} exists (owner ${describeUser(found.uid)}, group ${describeGroup(found.gid)}, mode ${octalMode(found.mode)})`,
    };
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { ok: true, what, detail: `${dir} ${missing}` };
    return { ok: false, what, detail: `${dir}: ${errorCode(err)}`, hint };
  }
}

async function writableProblem(
  dir: string,
  make: (dir: string) => Promise<unknown>,
): Promise<string | undefined> {
  try {
    await make(dir);
    await access(dir, constants.W_OK | constants.R_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    return errorCode(err);
  }
}

/** The fix for a folder the agent's user cannot use: the guide's owner and mode (install -d also fixes one that exists). */
const accessHint = (dir: string, mode: string) =>
  `give it to the agent's user and group with the mode of systemd/README.md: ${installDirCommand(dir, mode)}`;

/**
 * Whether the agent (this process's user) can write a folder of its own, made as the agent makes
 * it when missing. As root: only what is there (see ROOT_NOTICE).
 */
export async function writableLine(
  what: string,
  dir: string,
  asRoot = process.getuid?.() === 0,
  own: OwnFolder = { mode: GUIDE_MODES.shared, madeWhen: 'at start' },
): Promise<CheckLine> {
  const hint = accessHint(dir, own.mode);
  if (asRoot) return lookedAt(what, dir, `does not exist yet; the agent makes it ${own.madeWhen}`, hint);
  const problem = await writableProblem(dir, own.make ?? makeSharedDir);
  return {
    ok: problem === undefined,
    what,
    detail: problem ? `${dir} is not writable (${problem})` : `${dir} writable`,
    hint,
  };
}

/**
 * The state folder: the agent's alone, 0700 (the unit's StateDirectoryMode=, which systemd makes;
 * the agent makes it so at start too, journal/lock.ts).
 */
export function stateFolderLine(dir: string, asRoot = process.getuid?.() === 0): Promise<CheckLine> {
  return writableLine('state folder', dir, asRoot, {
    mode: GUIDE_MODES.state,
    madeWhen: 'at start (systemd makes it first: StateDirectory=)',
    make: (d) => mkdir(d, { recursive: true, mode: 0o700 }),
  });
}

/**
 * A local drop folder: the operator makes it (the agent does not, unless the folder says
 * `create: true`), so a missing one fails, as root too, with the command that makes it as
 * systemd/README.md does. `at` is the folder's key (`folders[2]`).
 */
export async function dropFolderLine(
  what: string,
  dir: string,
  at: string,
  create: boolean,
  asRoot = process.getuid?.() === 0,
): Promise<CheckLine> {
  const found = await stat(dir).catch((err: unknown) => errorCode(err));
  if (found === 'ENOENT' && !create) {
    return {
      ok: false,
      what,
      detail: `${dir} does not exist (${at}.source.path); the agent makes no drop folder unless the folder says create: true`,
      hint: `create it for the agent's user and the ERP's group (systemd/README.md, step 5): ${installDirCommand(dir, GUIDE_MODES.shared)}; or correct ${at}.source.path; or set ${at}.create: true`,
    };
  }
  if (typeof found === 'string' && found !== 'ENOENT') {
    // A folder above it the agent's user may not enter (EACCES), a file on the way (ENOTDIR): as start says it.
    const { text, fix } = dropFolderTrouble(dir, at, `cannot be reached (${found})`);
    return { ok: false, what, detail: text, hint: fix };
  }
  if (typeof found !== 'string' && !found.isDirectory()) {
    return {
      ok: false,
      what,
      detail: `${dir} is not a folder (${at}.source.path)`,
      hint: `put a folder there (${installDirCommand(dir, GUIDE_MODES.shared)}) or correct ${at}.source.path`,
    };
  }
  return writableLine(what, dir, asRoot, {
    mode: GUIDE_MODES.shared,
    madeWhen: `at start (${at}.create: true)`,
  });
}

/**
 * The key file's mode on its own line, with the command that fixes it. A key in systemd's
 * credentials folder is its private copy (mode 0400 whatever the source's): the line says so and
 * how to check the source itself.
 */
export function keyFileLine(
  keyFile: string,
  credentialsDir = process.env['CREDENTIALS_DIRECTORY'],
  systemdCredentials = '/run/credentials/',
): CheckLine {
  const what = 'key file permissions';
  const systemdCopy =
    credentialsDir?.startsWith(systemdCredentials) &&
    path.dirname(path.resolve(keyFile)) === path.resolve(credentialsDir)
      ? `; systemd's copy of a LoadCredential= source, whose mode this cannot see: run check as root with CREDENTIALS_DIRECTORY set to the source folder (systemd/README.md, step 6)`
      : '';
  try {
    const mode = statSync(keyFile).mode & 0o777;
    const open = (mode & 0o044) !== 0;
    const text = octalMode(mode);
    return {
      ok: !open,
      what,
      detail: open
        ? `${keyFile} is readable by group or others (mode ${text})`
        : `${keyFile} mode ${text}, readable by its owner only${systemdCopy}`,
      hint: `chmod 600 ${keyFile} (readable by its owner only: root under systemd/README.md, whose LoadCredential= hands the service a copy; else the agent's user)`,
    };
  } catch (err) {
    return {
      ok: false,
      what,
      detail: `${keyFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      hint: 'service.tls.keyFile must name the PEM private key',
    };
  }
}

type DiskLine = CheckLine & { others?: number };

const size = (bytes: number) =>
  bytes >= 1024 * MIB ? `${(bytes / (1024 * MIB)).toFixed(1)} GiB` : `${Math.floor(bytes / MIB)} MiB`;

/** Free space for the agent's user (bavail) on the file system of `dir`. */
export function diskLine(dir: string, free: { bavail: number; blocks: number; bsize: number }): CheckLine {
  const available = free.bavail * free.bsize;
  const share = free.blocks > 0 ? free.bavail / free.blocks : 0;
  const percent = `${(share * 100).toFixed(share < 0.1 ? 1 : 0)} %`;
  return {
    ok: available >= DISK_FAIL_BYTES,
    warn: available < DISK_WARN_BYTES || share < 0.05,
    what: `free disk ${dir}`,
    detail: `${size(available)} free (${percent})`,
    hint: 'free space on that file system: archives grow every day (move or prune old archive/YYYY-MM-DD folders)',
  };
}

/** One line per file system among `dirs` (grouped by device), named by its first folder. */
export async function diskLines(dirs: readonly string[]): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const seen = new Map<number, DiskLine>();
  for (const dir of [...new Set(dirs)]) {
    try {
      // A folder the agent makes at start lands on its nearest existing parent's file system.
      const dev = (await stat(await nearestExisting(dir))).dev;
      const line = seen.get(dev);
      if (line) {
        line.others = (line.others ?? 0) + 1;
        continue;
      }
      const fresh: DiskLine = diskLine(dir, await statfs(await nearestExisting(dir)));
      seen.set(dev, fresh);
      lines.push(fresh);
    } catch (err) {
      lines.push({
        ok: false,
        what: `free disk ${dir}`,
        detail: `cannot stat the file system (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        hint: `create ${dir}`,
      });
    }
  }
  return lines.map(({ others, ...line }: DiskLine) =>
    others ? { ...line, detail: `${line.detail}; same file system as ${others} more folder(s)` } : line,
  );
}
