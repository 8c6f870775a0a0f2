/**
 * Names of local users and groups, from /etc/passwd and /etc/group, for messages ("owner erp (uid
 * 1001)"). Node has no getpwuid; these files cover local accounts, which is what a drop folder's
 * writers usually are. An account from elsewhere (LDAP, sssd) has no name here, only its number.
 */
import { readFileSync } from 'node:fs';

/**
 * Whether `id` is one a user namespace shows for an account it does not map (systemd's
 * PrivateUsers=yes maps only root and the service's own user and group): the kernel's overflow id
 * (65534 unless changed), inside a namespace whose map is not the whole range. Outside one, 65534
 * is just `nobody` or `nogroup`.
 */
export function isUnmappedId(
  kind: 'uid' | 'gid',
  id: number,
  read: (file: string) => string = readText,
): boolean {
  const overflow = Number.parseInt(read(`/proc/sys/kernel/overflow${kind}`).trim(), 10);
  if (id !== (Number.isInteger(overflow) ? overflow : 65_534)) return false;
  const map = read(`/proc/self/${kind}_map`).trim().split(/\s+/);
  // The initial namespace maps every id to itself: `0 0 4294967295`.
  return (
    map.length > 0 &&
    map[0] !== '' &&
    !(map.length === 3 && map[0] === '0' && map[1] === '0' && map[2] === '4294967295')
  );
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The name of `id` in a passwd- or group-format text (name:x:id:…), if it is there. */
export function nameInDatabase(text: string, id: number): string | undefined {
  for (const line of text.split('\n')) {
    const [name, , field] = line.split(':');
    if (name && field !== undefined && Number(field) === id) return name;
  }
  return undefined;
}

export function userName(uid: number, read: (file: string) => string = readText): string | undefined {
  return nameInDatabase(read('/etc/passwd'), uid);
}

export function groupName(gid: number, read: (file: string) => string = readText): string | undefined {
  return nameInDatabase(read('/etc/group'), gid);
}

/** `erp (uid 1001)`, or `uid 1001` when it has no local name. */
export function describeUser(uid: number, read: (file: string) => string = readText): string {
  const name = userName(uid, read);
  return name === undefined ? `uid ${uid}` : `${name} (uid ${uid})`;
}

/** `docex-agent (gid 998)`, or `gid 998` when it has no local name. */
export function describeGroup(gid: number, read: (file: string) => string = readText): string {
  const name = groupName(gid, read);
  return name === undefined ? `gid ${gid}` : `${name} (gid ${gid})`;
}
