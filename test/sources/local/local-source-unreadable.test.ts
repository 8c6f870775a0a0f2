/**
 * A file the agent cannot read, stat or move waits where it is and is reported once (not once per
 * pass): one warning with its owner, mode and the fix, the list /readyz, the gauge and `status`
 * read; once fixed it is taken as any other file. The tests run as root, who can read a 0600 file:
 * the EACCES comes through the source's I/O seams (probeReadable, lstat, rename); modes and
 * owners are the real files'.
 */
import { chmodSync, existsSync, readdirSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeUnreadable, ERP_GUIDE } from '../../../src/sources/local/unreadable.js';
import { type Harness, makeHarness } from './support.js';

let h: Harness;
afterEach(async () => {
  await h.cleanup();
});

const denied = (syscall: string) =>
  Object.assign(new Error(`EACCES: permission denied, ${syscall}`), { code: 'EACCES' });

const WARNING = 'file the agent cannot read: it waits in the drop folder, untouched';
const warnings = (h: Harness, msg = WARNING) => h.logs.filter((l) => l['msg'] === msg);

describe('LocalSource: a file the agent cannot read', () => {
  it('is reported once, with owner, mode and fix, stays untouched, and is taken once readable', async () => {
    let readable: true | string = 'EACCES';
    let changes = 0;
    h = makeHarness({}, { probeReadable: async () => readable, onUnreadableChange: () => changes++ });
    const file = h.write('erp-0600.pdf');
    chmodSync(file, 0o600);
    await h.source.start();
    for (let t = 0; t < 30; t++) await h.step(500);
    expect(h.claimed).toEqual([]);
    expect(existsSync(file)).toBe(true);
    expect(warnings(h)).toHaveLength(1);
    expect(warnings(h)[0]).toMatchObject({
      level: 40, // warn
      code: 'DOCEX_SOURCE_FILE_UNREADABLE',
      folder: 'invoices',
      file: 'erp-0600.pdf',
      path: file,
      cannot: 'read',
      errno: 'EACCES',
      mode: '0600',
      owner: expect.stringMatching(/uid 0\b/),
      fix: expect.stringContaining(`chmod g+r ${file}`),
    });
    expect(String(warnings(h)[0]!['fix'])).toMatch(/umask 007 or 027.*setfacl -d -m g:.*systemd\/README\.md/);
    expect(h.source.unreadableFiles()).toEqual([
      expect.objectContaining({ name: 'erp-0600.pdf', cannot: 'read', errno: 'EACCES', mode: '0600' }),
    ]);
    expect(changes).toBe(1);

    // The ERP's side fixed: chmod g+r.
    chmodSync(file, 0o640);
    readable = true;
    await h.step(500);
    expect(h.names()).toEqual(['erp-0600.pdf']);
    expect(h.source.unreadableFiles()).toEqual([]);
    expect(changes).toBe(2);
    expect(h.logs.some((l) => l['msg'] === 'file the agent could not read is taken now')).toBe(true);
    expect(warnings(h)).toHaveLength(1);
  });

  it('is not reported when it becomes readable within the grace (a producer that chmods after writing)', async () => {
    let readable: true | string = 'EACCES';
    h = makeHarness({}, { probeReadable: async () => readable });
    h.write('chmod-after.pdf');
    await h.source.start();
    for (let t = 0; t < 12; t++) await h.step(500);
    readable = true;
    await h.step(500);
    expect(h.names()).toEqual(['chmod-after.pdf']);
    expect(warnings(h)).toEqual([]);
  });

  it('is forgotten, with a line, when it leaves the folder unread', async () => {
    h = makeHarness({}, { probeReadable: async () => 'EACCES' });
    const file = h.write('withdrawn.pdf');
    await h.source.start();
    for (let t = 0; t < 20; t++) await h.step(500);
    expect(h.source.unreadableFiles()).toHaveLength(1);
    rmSync(file);
    await h.step(500);
    expect(h.source.unreadableFiles()).toEqual([]);
    expect(
      h.logs.some((l) => l['msg'] === 'file the agent could not read is gone from the drop folder'),
    ).toBe(true);
  });
});

describe('LocalSource: a file the agent cannot stat or move', () => {
  it('cannot stat (no search permission on the folder): one warning without mode, taken once it can', async () => {
    let statDenied = true;
    h = makeHarness(
      {},
      {
        lstat: async (p) => {
          if (statDenied && path.basename(p) === 'hidden.pdf') throw denied(`lstat '${p}'`);
          return fs.lstat(p);
        },
      },
    );
    h.write('hidden.pdf');
    await h.source.start();
    for (let t = 0; t < 30; t++) await h.step(500);
    const lines = warnings(h, 'file the agent cannot stat: it waits in the drop folder, untouched');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      cannot: 'stat',
      errno: 'EACCES',
      fix: expect.stringContaining('chmod 2770'),
    });
    expect(lines[0]!['mode']).toBeUndefined();
    expect(h.logs.some((l) => l['msg'] === 'file observation failed')).toBe(false);
    statDenied = false;
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['hidden.pdf']);
    expect(h.source.unreadableFiles()).toEqual([]);
  });

  it('cannot move (a sticky folder, a folder not writable): reported at once, retried quietly, taken once it can', async () => {
    let renameDenied = true;
    h = makeHarness(
      { stability: { kind: 'rename-in' } },
      {
        rename: async (from, to) => {
          if (renameDenied) throw denied(`rename '${from}' -> '${to}'`);
          await fs.rename(from, to);
        },
      },
    );
    h.write('sticky.pdf');
    await h.source.start();
    await h.step(0);
    const moveWarning = 'file the agent cannot move: it waits in the drop folder, untouched';
    expect(warnings(h, moveWarning)).toHaveLength(1);
    expect(warnings(h, moveWarning)[0]).toMatchObject({
      cannot: 'move',
      errno: 'EACCES',
      mode: expect.any(String),
    });
    for (let t = 0; t < 4; t++) await h.step(30_000);
    expect(warnings(h, moveWarning)).toHaveLength(1);
    expect(h.logs.some((l) => l['msg'] === 'claim failed')).toBe(false);
    expect(readdirSync(h.dir)).toContain('sticky.pdf');
    renameDenied = false;
    await h.step(30_000);
    expect(h.names()).toEqual(['sticky.pdf']);
    expect(h.source.unreadableFiles()).toEqual([]);
  });
});

describe('describeUnreadable: the fix it gives', () => {
  const base = { folder: 'invoices', dir: '/srv/docex/invoices', name: 'a.pdf', errno: 'EACCES', since: 0 };

  it('read: umask, group or default ACL, and chmod (chgrp first when the file has another group)', () => {
    const same = describeUnreadable({
      ...base,
      cannot: 'read',
      access: { uid: 0, gid: 0, mode: 0o600 },
      dirGid: 0,
    });
    expect(same.fix).toBe(
      `the ERP's account must write files the root group can read: umask 007 or 027 as a member of that group, or a default ACL on the folder (setfacl -d -m g:root:rw /srv/docex/invoices); for this file: chmod g+r /srv/docex/invoices/a.pdf; see ${ERP_GUIDE}`,
    );
    expect(same.mode).toBe('0600');
    const other = describeUnreadable({
      ...base,
      cannot: 'read',
      access: { uid: 0, gid: 4242, mode: 0o600 },
      dirGid: 0,
    });
    expect(other.fix).toContain(
      'for this file: chgrp root /srv/docex/invoices/a.pdf && chmod g+r /srv/docex/invoices/a.pdf',
    );
    expect(other.group).toBe('gid 4242');
  });

  it("quotes the paths it puts in a command: a drop name is the ERP's choice, the fix may be pasted under sudo", () => {
    const hostile = describeUnreadable({
      ...base,
      dir: "/srv/docex/it's in",
      name: 'a.pdf; rm -rf ~',
      cannot: 'read',
      access: { uid: 0, gid: 4242, mode: 0o600 },
      dirGid: 0,
    });
    expect(hostile.path).toBe("/srv/docex/it's in/a.pdf; rm -rf ~");
    expect(hostile.fix).toContain(
      `for this file: chgrp root '/srv/docex/it'\\''s in/a.pdf; rm -rf ~' && chmod g+r '/srv/docex/it'\\''s in/a.pdf; rm -rf ~';`,
    );
    expect(hostile.fix).toContain(`(setfacl -d -m g:root:rw '/srv/docex/it'\\''s in')`);
    for (const cannot of ['stat', 'move'] as const) {
      expect(describeUnreadable({ ...base, dir: '/srv/a b; x', cannot }).fix).toContain(
        "(chmod 2770 '/srv/a b; x')",
      );
    }
  });

  it('stat and move: the folder mode of the guide', () => {
    expect(describeUnreadable({ ...base, cannot: 'stat' }).fix).toMatch(
      /^the agent cannot look at the files of \/srv\/docex\/invoices: .*chmod 2770/,
    );
    expect(describeUnreadable({ ...base, cannot: 'move' }).fix).toMatch(
      /without the sticky bit \(chmod 2770 \/srv\/docex\/invoices\)/,
    );
  });
});
