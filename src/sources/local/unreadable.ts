/**
 * A file in a drop folder that the agent cannot read, stat or move (permissions: the ERP wrote it
 * with umask 077, outside the agent's group, into a folder with the sticky bit …). It is never
 * taken nor moved: it waits where it is until it is fixed, and is then taken as any other file.
 * What it is and how to fix it, said once per file (log line, /readyz, `docex-agent status`).
 */
import path from 'node:path';
import { describeGroup, describeUser, groupName, isUnmappedId } from '../../core/accounts.js';
import { octalMode } from '../../core/file-mode.js';
import { GUIDE_MODES, shellWord } from '../../core/shared-dir.js';
import type { FileAccess } from './observe-file.js';

export const UNREADABLE_CODE = 'DOCEX_SOURCE_FILE_UNREADABLE';

/** Where the systemd guide tells the ERP's side (group, umask, default ACL). */
export const ERP_GUIDE = 'systemd/README.md, "The ERP\'s account: group, umask or ACL"';

/** What the agent cannot do with the file. */
export type UnreadableCause = 'read' | 'stat' | 'move';

export interface UnreadableFile {
  folder: string;
  name: string;
  path: string;
  cannot: UnreadableCause;
  /** Why, as the system said it (EACCES, EPERM, …). */
  errno: string;
  /** Owner, group and mode as the agent sees them (absent when it cannot stat the file). */
  owner?: string;
  group?: string;
  /** Octal, e.g. `0600`. */
  mode?: string;
  /** Since when (epoch ms) the file has been found so. */
  since: number;
  /** What to do, in one line. */
  fix: string;
}

export interface UnreadableFacts {
  folder: string;
  dir: string;
  name: string;
  cannot: UnreadableCause;
  errno: string;
  access?: FileAccess | undefined;
  /** The drop folder's group (its setgid bit hands it to new files). */
  dirGid?: number | undefined;
  since: number;
}

/**
 * The owner as the agent sees it. In a user namespace (the unit's PrivateUsers=yes) an account the
 * service does not map shows as the overflow id: say so rather than name it `nobody`.
 */
function ownerText(uid: number): string {
  if (isUnmappedId('uid', uid))
    return `uid ${uid}: an account outside the service's user namespace (ls -ln as root shows the real owner)`;
  return describeUser(uid);
}

function groupText(gid: number): string {
  if (isUnmappedId('gid', gid)) return `gid ${gid}: a group outside the service's user namespace`;
  return describeGroup(gid);
}

function fixFor(facts: UnreadableFacts, filePath: string): string {
  const { cannot, access, dirGid } = facts;
  // Paths and names are the ERP's (`a.pdf; rm -rf ~` is a valid file name): quoted for the shell the fix is pasted into.
  const dir = shellWord(facts.dir);
  const file = shellWord(filePath);
  if (cannot === 'stat') {
    return `the agent cannot look at the files of ${dir}: give its group search permission on the folder (chmod ${GUIDE_MODES.shared} ${dir}); see ${ERP_GUIDE}`;
  }
  if (cannot === 'move') {
    return `the agent cannot move files out of ${dir}: the folder must be writable by its group and without the sticky bit (chmod ${GUIDE_MODES.shared} ${dir}); see ${ERP_GUIDE}`;
  }
  const group = dirGid === undefined ? undefined : (groupName(dirGid) ?? String(dirGid));
  const otherGroup = access !== undefined && dirGid !== undefined && access.gid !== dirGid;
  const thisFile = `${otherGroup && group ? `chgrp ${shellWord(group)} ${file} && ` : ''}chmod g+r ${file}`;
  const who = group ? `the ${group} group` : "the agent's group";
  const acl = group
    ? ` or a default ACL on the folder (setfacl -d -m ${shellWord(`g:${group}:rw`)} ${dir})`
    : '';
  return `the ERP's account must write files ${who} can read: umask 007 or 027 as a member of that group${acl ? `,${acl}` : ''}; for this file: ${thisFile}; see ${ERP_GUIDE}`;
}

export function describeUnreadable(facts: UnreadableFacts): UnreadableFile {
  const filePath = path.join(facts.dir, facts.name);
  const { access } = facts;
  return {
    folder: facts.folder,
    name: facts.name,
    path: filePath,
    cannot: facts.cannot,
    errno: facts.errno,
    ...(access
      ? { owner: ownerText(access.uid), group: groupText(access.gid), mode: octalMode(access.mode) }
      : {}),
    since: facts.since,
    fix: fixFor(facts, filePath),
  };
}

/** One line for /readyz and status: `invoices/invoice.pdf: cannot read (EACCES), mode 0600, owner erp (uid 1001)`. */
export function unreadableLine(file: UnreadableFile): string {
  const facts = [
    `cannot ${file.cannot} (${file.errno})`,
    ...(file.mode ? [`mode ${file.mode}`] : []),
    ...(file.owner ? [`owner ${file.owner}`] : []),
    ...(file.group ? [`group ${file.group}`] : []),
  ];
  return `${file.folder}/${file.name}: ${facts.join(', ')}`;
}

let account: string | undefined;

/** Who the agent runs as, e.g. `docex-agent (uid 998), groups docex-agent (gid 998)`, named in the warning. */
export function agentAccount(): string | undefined {
  if (account === undefined && typeof process.getuid === 'function') {
    const groups = (process.getgroups?.() ?? [process.getgid?.() ?? 0]).map((gid) => describeGroup(gid));
    account = `${describeUser(process.getuid())}, groups ${[...new Set(groups)].join(', ')}`;
  }
  return account;
}
