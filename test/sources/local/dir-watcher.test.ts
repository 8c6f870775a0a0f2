import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type DirWatcher, watchDirectory } from '../../../src/sources/local/dir-watcher.js';
import { waitFor } from '../../support/wait-for.js';
import { makeTempDir } from './support.js';

let watcher: DirWatcher | undefined;
let dir: string;
afterEach(() => {
  watcher?.close();
  watcher = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('watchDirectory', () => {
  it('hands over a UTF-8 name as text, and asks for a rescan for a name that is not UTF-8', async () => {
    dir = makeTempDir();
    const names: string[] = [];
    let rescans = 0;
    watcher = watchDirectory(dir, {
      onName: (name) => names.push(name),
      onRescan: () => rescans++,
      onError: (err) => {
        throw err;
      },
    });
    writeFileSync(path.join(dir, 'facture été.pdf'), 'x');
    await waitFor(() => names.includes('facture été.pdf'));
    writeFileSync(Buffer.concat([Buffer.from(`${dir}/`), Buffer.from('facture-\u00e9.pdf', 'latin1')]), 'x');
    await waitFor(() => rescans > 0);
    // The lossy form of the Latin-1 name never reaches the source: lstat of it would say "gone".
    expect(names.filter((n) => n.includes('\ufffd'))).toEqual([]);
  });
});
