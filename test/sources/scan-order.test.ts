import { describe, expect, it } from 'vitest';
import { compareScanKeys, FirstInOrder, pickForScan, type ScanKey } from '../../src/sources/scan-order.js';

const key = (name: string, mtimeMs: number): ScanKey => ({ name, mtimeMs });
const names = (keys: readonly ScanKey[]) => keys.map((k) => k.name);
const self = (k: ScanKey) => k;

describe('scan order', () => {
  it('mtime: oldest modification time first, the same time by name', () => {
    const keys = [key('c.pdf', 300), key('b.pdf', 100), key('z.pdf', 200), key('a.pdf', 200)];
    expect(names(pickForScan(keys, self, { order: 'mtime' }))).toEqual(['b.pdf', 'a.pdf', 'z.pdf', 'c.pdf']);
  });

  it('name: by file name whatever the times, by code point (upper case before lower)', () => {
    const keys = [key('b.pdf', 1), key('a.pdf', 3), key('B.pdf', 2)];
    expect(names(pickForScan(keys, self, { order: 'name' }))).toEqual(['B.pdf', 'a.pdf', 'b.pdf']);
  });

  it('mtime: a file whose time is not known goes after every known one', () => {
    const keys = [key('a.pdf', Number.NaN), key('b.pdf', 5), key('0.pdf', Number.NaN)];
    expect(names(pickForScan(keys, self, { order: 'mtime' }))).toEqual(['b.pdf', '0.pdf', 'a.pdf']);
    expect(compareScanKeys('mtime', key('x', Number.NaN), key('x', Number.NaN))).toBe(0);
  });

  it('maxFilesPerScan: the first files in order, sorted before the cut, the input left as it was', () => {
    const keys = [key('e', 5), key('d', 4), key('c', 3), key('b', 2), key('a', 1)];
    expect(names(pickForScan(keys, self, { order: 'mtime', maxFilesPerScan: 2 }))).toEqual(['a', 'b']);
    expect(names(keys)).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(pickForScan(keys, self, { order: 'mtime', maxFilesPerScan: 10 })).toHaveLength(5);
  });

  it('a backlog larger than the cap drains oldest first across scans', () => {
    let waiting = [7, 3, 9, 1, 5, 8, 2].map((t) => key(`f${t}`, t));
    const handed: string[][] = [];
    while (waiting.length > 0) {
      const picked = pickForScan(waiting, self, { order: 'mtime', maxFilesPerScan: 3 });
      handed.push(names(picked));
      waiting = waiting.filter((k) => !picked.includes(k));
    }
    expect(handed).toEqual([['f1', 'f2', 'f3'], ['f5', 'f7', 'f8'], ['f9']]);
  });
});

describe('FirstInOrder (a streamed listing)', () => {
  it('keeps what sorting the whole listing and cutting it would, for listings in any order, ties included', () => {
    // Seeded: the same listings at every run.
    let seed = 30;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const order = round % 2 === 0 ? 'mtime' : 'name';
      const limit = random(12);
      const listing = Array.from({ length: random(60) }, (_, i) => key(`f${(i * 7919) % 61}`, random(8)));
      const first = new FirstInOrder(order, limit);
      for (const k of listing) first.offer(k);
      const sorted = [...listing].sort((a, b) => compareScanKeys(order, a, b));
      expect(first.take()).toEqual(sorted.slice(0, limit));
      expect(first.leftOut).toBe(listing.length > limit);
    }
  });

  it('keeps the first keys in order of a listing many times its limit, and says some were left out', () => {
    const first = new FirstInOrder('mtime', 3);
    // A listing in no order: times 0..99 scrambled.
    for (let i = 0; i < 100; i++) first.offer(key(`f${(i * 37) % 100}`, (i * 37) % 100));
    expect(names(first.take())).toEqual(['f0', 'f1', 'f2']);
    expect(first.leftOut).toBe(true);
  });

  it('keeps everything, in order, when the listing fits, and counts a name offered twice once', () => {
    const first = new FirstInOrder('name', 5);
    for (const n of ['c', 'a', 'b', 'a']) first.offer(key(n, 0));
    expect(names(first.take())).toEqual(['a', 'b', 'c']);
    expect(first.leftOut).toBe(false);
  });

  it('with no room keeps nothing and says the listing was left out', () => {
    const first = new FirstInOrder('mtime', 0);
    first.offer(key('a', 1));
    expect(first.take()).toEqual([]);
    expect(first.leftOut).toBe(true);
  });
});
