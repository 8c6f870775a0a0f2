/**
 * A recursive local folder on real temp folders: files in sub-folders down to the depth, claimed
 * into the same sub-path of `.processing/` (recovery reads it back), sub-folders made later found
 * through the watch, and what is never entered (hidden folders, the agent's own, links, hostile
 * names). A flat folder leaves its sub-folders alone, as before.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_IN_THE_WAY, recoverProcessing } from '../../../src/sources/local/claim.js';
import { watchDirectory } from '../../../src/sources/local/dir-watcher.js';
import { ownDirsBelow } from '../../../src/sources/local/factory.js';
import type { RejectedEntry } from '../../../src/sources/local/local-source.js';
import { waitFor } from '../../support/wait-for.js';
import { type Harness, harnessesCleanedAfterEach, makeTempDir } from './support.js';

const harness = harnessesCleanedAfterEach();

/** Writes `relative` (making its folders) under the drop folder. */
function put(h: Harness, relative: string, content = 'content'): string {
  const file = path.join(h.dir, ...relative.split('/'));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

const relativeClaims = (h: Harness) =>
  h.claimed.map((c) => path.relative(h.dir, c.originalPath).split(path.sep).join('/')).sort();

describe('LocalSource: recursive folders', () => {
  it('takes files in sub-folders down to the depth, claimed into the same sub-path of .processing', async () => {
    const h = harness({ recursive: { depth: 2 }, stability: { kind: 'rename-in' } });
    put(h, 'top.pdf');
    put(h, 'acme/a.pdf');
    put(h, 'acme/invoices/x.pdf');
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['acme/a.pdf', 'acme/invoices/x.pdf', 'top.pdf']);
    const x = h.claimed.find((c) => c.name === 'x.pdf')!;
    // The journal's name is the file's own; its sub-path is kept in its original and claimed paths.
    expect(x.originalPath).toBe(path.join(h.dir, 'acme', 'invoices', 'x.pdf'));
    expect(x.claimedPath).toBe(path.join(h.dir, '.processing', 'acme', 'invoices', 'x.pdf'));
    const recovered = await recoverProcessing(h.dir, { recursive: true });
    expect(recovered.map((f) => [f.name, f.relativePath])).toEqual([
      ['a.pdf', 'acme/a.pdf'],
      ['x.pdf', 'acme/invoices/x.pdf'],
      ['top.pdf', 'top.pdf'],
    ]);
  });

  it('leaves a file whose sub-folder’s name a claimed file holds in place, says so once, and claims it once that file has moved on', async () => {
    const h = harness({ recursive: { depth: 1 }, stability: { kind: 'rename-in' } }, { watch: true });
    put(h, 'acme', 'a file named like a company folder');
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['acme']);
    // `acme` in flight in `.processing/`; the ERP now makes the folder `acme/`.
    renameSync(put(h, 'acme/x.pdf.part'), path.join(h.dir, 'acme', 'x.pdf'));
    const inTheWay = () => h.logs.filter((l) => l['msg'] === FILE_IN_THE_WAY);
    // Found through the watch, then tried again every 30 s.
    await waitFor(async () => {
      await h.step(30_000);
      return inTheWay().length > 0;
    });
    for (let i = 0; i < 3; i++) await h.step(30_000);
    expect(relativeClaims(h)).toEqual(['acme']);
    expect(inTheWay()).toEqual([
      expect.objectContaining({ file: 'acme/x.pdf', code: 'DOCEX_SOURCE_CLAIM_FAILED' }),
    ]);
    expect(h.logs.filter((l) => l['msg'] === 'claim failed')).toEqual([]);

    rmSync(path.join(h.dir, '.processing', 'acme'));
    await waitFor(async () => {
      await h.step(30_000);
      return relativeClaims(h).length === 2;
    });
    expect(relativeClaims(h)).toEqual(['acme', 'acme/x.pdf']);
    expect(inTheWay()).toHaveLength(1);
  });

  it('leaves files deeper than the depth where they are', async () => {
    const h = harness({ recursive: { depth: 1 }, stability: { kind: 'rename-in' } });
    put(h, 'acme/a.pdf');
    const deep = put(h, 'acme/invoices/x.pdf');
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['acme/a.pdf']);
    expect(h.source.pendingCount).toBe(0);
    expect(path.relative(h.dir, deep)).toBe(path.join('acme', 'invoices', 'x.pdf'));
  });

  it('leaves sub-folders of a flat folder alone, as before', async () => {
    const h = harness({ stability: { kind: 'rename-in' } });
    put(h, 'top.pdf');
    put(h, 'acme/a.pdf');
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['top.pdf']);
    expect(h.claimed[0]!.claimedPath).toBe(path.join(h.dir, '.processing', 'top.pdf'));
  });

  it('never enters hidden folders, the agent’s own folders or a sub-folder whose name is not a valid file name', async () => {
    const h = harness(
      { recursive: { depth: 3 }, stability: { kind: 'rename-in' } },
      { ownDirs: ['out/archive'] },
    );
    put(h, '.hidden/a.pdf');
    put(h, 'out/archive/2026-11-28/old.pdf');
    put(h, 'out/new.pdf');
    put(h, 'bad\nname/b.pdf');
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['out/new.pdf']);
    const warned = h.logs.filter((l) => l['msg'] === 'sub-folder name is not a valid file name: not entered');
    expect(warned).toHaveLength(1);
    await h.source.scan();
    expect(h.logs.filter((l) => l['msg'] === warned[0]!['msg'])).toHaveLength(1);
  });

  it('knows the agent’s folders inside the drop tree at any depth, and none outside it', () => {
    expect(
      ownDirsBelow('/srv/in', [
        '/srv/in/out/statuses',
        '/srv/in/.archive',
        '/srv/archive',
        '/srv/in',
        '/srv/input',
      ]),
    ).toEqual(['out/statuses', '.archive']);
  });

  it('never follows a link to a folder: the link is refused like any dropped link', async () => {
    const outside = makeTempDir();
    try {
      writeFileSync(path.join(outside, 'secret.pdf'), 'not yours');
      const rejected: RejectedEntry[] = [];
      const h = harness(
        { recursive: { depth: 2 }, stability: { kind: 'rename-in' } },
        { onRejected: async (entry) => void rejected.push(entry) },
      );
      mkdirSync(path.join(h.dir, 'acme'));
      symlinkSync(outside, path.join(h.dir, 'acme', 'linked'));
      await h.source.start();
      await h.step(0);
      expect(h.claimed).toEqual([]);
      expect(rejected.map((r) => [r.name, r.subFolders, r.code])).toEqual([
        ['linked', ['acme'], 'DOCEX_INPUT_SYMLINK'],
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('finds a sub-folder made after start through the watch, and drops the watch of one removed', async () => {
    const h = harness({ recursive: { depth: 3 }, stability: { kind: 'rename-in' } }, { watch: true });
    mkdirSync(path.join(h.dir, 'old'));
    await h.source.start();
    expect(h.source.watchedFolders).toBe(2);
    // A new tree made at once: the new folders' event asks for a scan, which lists and watches them.
    const temp = put(h, 'new/deeper/x.pdf.part');
    renameSync(temp, path.join(h.dir, 'new', 'deeper', 'x.pdf'));
    // No stat timer here: each pass is the test's; the watch's events decide what a pass finds.
    await waitFor(async () => {
      await h.step(0);
      return h.claimed.length === 1;
    });
    expect(relativeClaims(h)).toEqual(['new/deeper/x.pdf']);
    expect(h.source.watchedFolders).toBe(4);
    // A file written into the watched sub-folder later is seen through its own watch.
    put(h, 'new/deeper/y.pdf');
    await waitFor(() => h.source.pendingCount === 1);
    rmSync(path.join(h.dir, 'old'), { recursive: true });
    await waitFor(() => h.source.watchedFolders === 3);
  });

  it('keeps taking files once the watch limit is reached: one warning, and the scans find the rest', async () => {
    let watches = 0;
    const limited: typeof watchDirectory = (dir, handlers) => {
      if (++watches > 2) {
        throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), {
          code: 'ENOSPC',
        });
      }
      return watchDirectory(dir, handlers);
    };
    const h = harness(
      { recursive: { depth: 1 }, stability: { kind: 'rename-in' } },
      { watch: true, watchDirectory: limited },
    );
    for (const name of ['a', 'b', 'c', 'd']) put(h, `${name}/x.pdf`);
    await h.source.start();
    await h.step(0);
    expect(relativeClaims(h)).toEqual(['a/x.pdf', 'b/x.pdf', 'c/x.pdf', 'd/x.pdf']);
    expect(h.source.watchedFolders).toBe(2);
    put(h, 'd/y.pdf');
    await h.source.scan();
    await h.step(0);
    expect(relativeClaims(h)).toContain('d/y.pdf');
    const warnings = h.logs.filter((l) => l['code'] === 'DOCEX_SOURCE_WATCH_LIMIT');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, watched: 2, errno: 'ENOSPC' });
  });
});
