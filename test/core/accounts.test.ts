import { describe, expect, it } from 'vitest';
import { describeGroup, describeUser, isUnmappedId, nameInDatabase } from '../../src/core/accounts.js';

const files: Record<string, string> = {
  '/etc/passwd': 'root:x:0:0:root:/root:/bin/bash\nerp:x:1001:1001::/home/erp:/bin/sh\n',
  '/etc/group': 'root:x:0:\ndocex-agent:x:998:erp\n',
  '/proc/sys/kernel/overflowuid': '65534\n',
  '/proc/sys/kernel/overflowgid': '65534\n',
};
const read =
  (extra: Record<string, string> = {}) =>
  (file: string) =>
    ({ ...files, ...extra })[file] ?? '';

describe('local account names', () => {
  it('names a user or group from the local databases, and gives the number alone otherwise', () => {
    expect(nameInDatabase(files['/etc/passwd']!, 1001)).toBe('erp');
    expect(describeUser(1001, read())).toBe('erp (uid 1001)');
    expect(describeUser(4242, read())).toBe('uid 4242');
    expect(describeGroup(998, read())).toBe('docex-agent (gid 998)');
  });

  it("knows the overflow id of a user namespace (PrivateUsers=yes) from 65534's own name outside one", () => {
    const initial = { '/proc/self/uid_map': '         0          0 4294967295\n' };
    const privateUsers = {
      '/proc/self/uid_map': '         0          0          1\n       998        998          1\n',
    };
    expect(isUnmappedId('uid', 65_534, read(initial))).toBe(false);
    expect(isUnmappedId('uid', 65_534, read(privateUsers))).toBe(true);
    expect(isUnmappedId('uid', 1001, read(privateUsers))).toBe(false);
  });
});
