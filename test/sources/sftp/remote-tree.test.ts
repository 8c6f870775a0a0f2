/**
 * The listing of a recursive SFTP folder over a scripted server: breadth first, down to the depth,
 * files named by their relative paths, and never a folder a name could steer out of the tree.
 */
import { describe, expect, it } from 'vitest';
import { DocexError } from '../../../src/core/errors.js';
import { steersPath } from '../../../src/domain/relative-path.js';
import type { RemoteEntry } from '../../../src/sftp/types.js';
import { listRemoteTree, type SkippedFolder } from '../../../src/sources/sftp/remote-tree.js';

const file = (name: string): RemoteEntry => ({ name, type: 'file', size: 1, mtimeMs: 0 });
const dir = (name: string): RemoteEntry => ({ name, type: 'dir', size: 0, mtimeMs: 0 });

/** A server whose folders are `tree`'s keys; every other path is missing. */
function scripted(tree: Record<string, RemoteEntry[]>) {
  const listed: string[] = [];
  return {
    listed,
    list: async (p: string) => {
      listed.push(p);
      const entries = tree[p];
      if (entries === undefined) throw new DocexError('DOCEX_SFTP_NOT_FOUND', `${p} not found`);
      return entries;
    },
    reachable: async (p: string) => tree[p] !== undefined,
  };
}

describe('the listing of a recursive sftp folder', () => {
  it('lists breadth first down to the depth, naming files by their relative paths', async () => {
    const server = scripted({
      '/in': [dir('b'), file('top.pdf'), dir('a')],
      '/in/a': [file('one.pdf'), dir('deep')],
      '/in/b': [file('two.pdf')],
      '/in/a/deep': [file('three.pdf'), dir('deeper')],
      '/in/a/deep/deeper': [file('four.pdf')],
    });
    const tree = await listRemoteTree('/in', { ...server, depth: 2 });
    expect(server.listed).toEqual(['/in', '/in/b', '/in/a', '/in/a/deep']);
    expect(tree.entries.map((e) => e.name)).toEqual([
      'top.pdf',
      'b/two.pdf',
      'a/one.pdf',
      'a/deep/three.pdf',
    ]);
    expect(tree.seen).toContain('a/deep/deeper');
    // A flat folder lists the folder alone.
    const flat = scripted({ '/in': [dir('a'), file('top.pdf')] });
    expect((await listRemoteTree('/in', { ...flat, depth: 0 })).entries.map((e) => e.name)).toEqual([
      'top.pdf',
    ]);
    expect(flat.listed).toEqual(['/in']);
  });

  it('never enters hidden folders, its own folders, links, claim-folder names, or names that are not file names', async () => {
    const server = scripted({
      '/in': [
        dir('.processing'),
        dir('.archive'),
        dir('archive'),
        { name: 'linked', type: 'symlink', size: 0, mtimeMs: 0 },
        dir('agent-0123456789abcdef'),
        dir('ctl\u0001'),
        dir('caf\uFFFD'),
        dir('real-\uFFFD'),
        dir('ok'),
      ],
      '/in/real-\uFFFD': [file('x.pdf')],
      '/in/ok': [file('x.pdf')],
    });
    const skipped: Array<[string, SkippedFolder]> = [];
    const tree = await listRemoteTree('/in', {
      ...server,
      depth: 4,
      ownDirs: new Set(['archive']),
      skipClaimFolders: true,
      onSkipped: (relative, why) => skipped.push([relative, why]),
    });
    expect(server.listed).toEqual(['/in', '/in/real-\uFFFD', '/in/ok']);
    expect(tree.entries.map((e) => e.name)).toEqual(['linked', 'real-\uFFFD/x.pdf', 'ok/x.pdf']);
    expect(skipped).toEqual([
      ['agent-0123456789abcdef', 'reserved'],
      ['ctl\u0001', 'bad-name'],
      ['caf\uFFFD', 'bad-name'],
    ]);
  });

  it('leaves out names that would steer a path out of the folder: ., .., a slash, a NUL', async () => {
    const hostile = ['..', '.', '', '../escape', 'a/../../escape', 'x\u0000y', '/etc'];
    for (const name of hostile) expect(steersPath(name), JSON.stringify(name)).toBe(true);
    const server = scripted({
      '/in': [...hostile.map(dir), ...hostile.map(file), dir('ok')],
      '/in/ok': [file('x.pdf')],
    });
    const tree = await listRemoteTree('/in', { ...server, depth: 4 });
    expect(server.listed).toEqual(['/in', '/in/ok']);
    expect(tree.entries.map((e) => e.name)).toEqual(['ok/x.pdf']);
    expect(tree.seen).toEqual(['ok', 'ok/x.pdf']);
  });

  it('lists the rest of the tree when a sub-folder is gone, shut or fails to list; a failing root fails the listing', async () => {
    const server = scripted({
      '/in': [dir('gone'), dir('shut'), dir('failing'), dir('not-a-folder'), dir('ok')],
      '/in/ok': [file('x.pdf')],
    });
    const list = async (p: string) => {
      if (p === '/in/shut') throw new DocexError('DOCEX_SFTP_PERMISSION', 'denied');
      if (p === '/in/failing') throw new DocexError('DOCEX_SFTP_IO', 'SSH_FX_FAILURE');
      if (p === '/in/not-a-folder') throw new DocexError('DOCEX_SFTP_IO', 'not a directory');
      return server.list(p);
    };
    const skipped: string[] = [];
    const tree = await listRemoteTree('/in', {
      ...server,
      list,
      depth: 1,
      onSkipped: (relative, why, cause) =>
        skipped.push(`${relative}:${why}:${(cause as DocexError | undefined)?.code}`),
    });
    expect(tree.entries.map((e) => e.name)).toEqual(['ok/x.pdf']);
    expect(skipped).toEqual([
      'shut:unlistable:DOCEX_SFTP_PERMISSION',
      'failing:unlistable:DOCEX_SFTP_IO',
      'not-a-folder:unlistable:DOCEX_SFTP_IO',
    ]);
    await expect(listRemoteTree('/nowhere', { ...server, depth: 1 })).rejects.toMatchObject({
      code: 'DOCEX_SFTP_NOT_FOUND',
    });
  });

  it('fails the listing when the connection breaks on a sub-folder: the server, not the folder, is at fault', async () => {
    const server = scripted({ '/in': [dir('a'), file('top.pdf')], '/in/a': [file('x.pdf')] });
    for (const code of ['DOCEX_SFTP_CONNECT', 'DOCEX_SFTP_AUTH'] as const) {
      const list = async (p: string) => {
        if (p === '/in/a') throw new DocexError(code, 'connection lost');
        return server.list(p);
      };
      await expect(listRemoteTree('/in', { ...server, list, depth: 1 }), code).rejects.toMatchObject({
        code,
      });
    }
  });
});
