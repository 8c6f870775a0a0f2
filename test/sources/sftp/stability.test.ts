import { describe, expect, it } from 'vitest';
import type { RemoteEntry } from '../../../src/sftp/types.js';
import { createNameFilter } from '../../../src/sources/glob.js';
import { EMPTY_SETTLE_FACTOR } from '../../../src/sources/local/stability.js';
import { ListingTracker } from '../../../src/sources/sftp/stability.js';

const file = (name: string, size: number, mtimeMs = 1_000_000): RemoteEntry => ({
  name,
  type: 'file',
  size,
  mtimeMs,
});
const all = createNameFilter({ include: ['*'], exclude: ['.*', '*.tmp', '*.part'] });
const names = (v: { ready: { entry: RemoteEntry }[] }) => v.ready.map((r) => r.entry.name);

describe('ListingTracker, settle rule', () => {
  const settle = { kind: 'settle' as const, settleMs: 2000 };

  it('takes a file only when two listings settleMs apart show the same size and mtime', () => {
    const t = new ListingTracker(settle, all);
    expect(names(t.feed([file('a.pdf', 10)], 0))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 10)], 1999))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 10)], 2000))).toEqual(['a.pdf']);
  });

  it('restarts the settle time when a file grows between listings', () => {
    const t = new ListingTracker(settle, all);
    t.feed([file('a.pdf', 10)], 0);
    expect(names(t.feed([file('a.pdf', 20)], 2500))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 20)], 4000))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 20)], 4500))).toEqual(['a.pdf']);
  });

  it('restarts the settle time when only the mtime changes (rewritten with the same size)', () => {
    const t = new ListingTracker(settle, all);
    t.feed([file('a.pdf', 10, 1000)], 0);
    expect(names(t.feed([file('a.pdf', 10, 2000)], 3000))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 10, 2000)], 5000))).toEqual(['a.pdf']);
  });

  it('never takes temp names, dotfiles, folders or symlinks, and an empty file only once it stayed empty long', () => {
    const t = new ListingTracker(settle, all);
    const listing: RemoteEntry[] = [
      file('empty.pdf', 0),
      file('b.pdf.part', 5),
      file('c.tmp', 5),
      file('.hidden', 5),
      { name: 'sub', type: 'dir', size: 4096, mtimeMs: 0 },
      { name: 'link.pdf', type: 'symlink', size: 5, mtimeMs: 0 },
      file('ok.pdf', 5),
    ];
    t.feed(listing, 0);
    expect(names(t.feed(listing, 2000))).toEqual(['ok.pdf']);
    // The local folders' rule: an empty file waits EMPTY_SETTLE_FACTOR settle times (then it is refused as empty).
    expect(names(t.feed(listing, 2000 * EMPTY_SETTLE_FACTOR))).toEqual(['empty.pdf', 'ok.pdf']);
  });

  it('applies include globs case-insensitively', () => {
    const t = new ListingTracker({ kind: 'settle', settleMs: 0 }, createNameFilter({ include: ['*.pdf'] }));
    const listing = [file('A.PDF', 5), file('b.csv', 5)];
    t.feed(listing, 0);
    expect(names(t.feed(listing, 1))).toEqual(['A.PDF']);
  });

  it('forgets names that left the listing, so a name that comes back settles again', () => {
    const t = new ListingTracker(settle, all);
    t.feed([file('a.pdf', 10)], 0);
    t.feed([], 1000);
    expect(t.size).toBe(0);
    expect(names(t.feed([file('a.pdf', 10)], 2500))).toEqual([]);
    expect(names(t.feed([file('a.pdf', 10)], 4500))).toEqual(['a.pdf']);
  });
});

describe('ListingTracker, done-marker rule', () => {
  const rule = { kind: 'done-marker' as const, suffixes: ['.done', '.ready'] };

  it('takes a file once its marker is listed, and hands the marker along', () => {
    const t = new ListingTracker(rule, all);
    expect(names(t.feed([file('a.pdf', 10, 1000)], 0))).toEqual([]);
    const v = t.feed([file('a.pdf', 10, 1000), file('a.pdf.ready', 0, 2000)], 1);
    expect(names(v)).toEqual(['a.pdf']);
    expect(v.ready[0]?.marker?.name).toBe('a.pdf.ready');
  });

  it('ignores a marker older than its data file (the data was rewritten after it)', () => {
    const t = new ListingTracker(rule, all);
    expect(names(t.feed([file('a.pdf', 10, 5000), file('a.pdf.done', 0, 1000)], 0))).toEqual([]);
  });

  it('never takes the marker itself as a file', () => {
    const t = new ListingTracker(rule, all);
    const v = t.feed([file('x.pdf.done', 3, 1000)], 0);
    expect(v.ready).toEqual([]);
    expect(v.waiting).toBe(0);
  });
});
